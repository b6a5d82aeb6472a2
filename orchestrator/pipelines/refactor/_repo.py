"""The user's repository as the pipeline sees it before it starts: checked, and its files chosen.

`open_repository` refuses what the pipeline cannot work from (no repository, no commit,
uncommitted changes to tracked files) and notes HEAD and the current branch, which the run never
moves. `select_files` lists the tracked regular files that the `--files` pathspecs match, with
their sizes in HEAD; `check_new_branches` refuses branches git could not create.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from ._errors import BranchUnavailable, NoFilesSelected, NotARepository, UncommittedChanges
from ._git import Git
from ._partition import SelectedFile

_REGULAR_MODES = frozenset({"100644", "100755"})
"""Symlinks (120000) and submodules (160000) are left out: a symlink in a write set would make
its target writable, and that may be another worker's file."""
_SHOWN_CHANGES = 10


@dataclass(frozen=True)
class Repository:
    """A clean repository: where it is, where its git data is, and what HEAD was at the start."""

    root: Path
    """The top of the work tree."""
    cwd: Path
    """The folder given as --repo; `--files` pathspecs are relative to it, as in git."""
    common_dir: Path
    head: str
    branch: str | None
    """The checked-out branch, or None on a detached HEAD."""


async def open_repository(git: Git, folder: Path) -> Repository:
    """The repository at `folder`, refused unless it has a commit and no uncommitted changes."""
    cwd = await anyio.to_thread.run_sync(_real_folder, folder)
    inside = await git.run(cwd, "rev-parse", "--show-toplevel", check=False)
    if inside.code != 0:
        raise NotARepository(
            f"--repo {folder} is not inside a git work tree; run `git init` or give a repository"
        )
    root = await _realpath(Path(inside.stdout.strip()))
    head = await git.run(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    if head.code != 0:
        raise NotARepository(
            f"the repository at {root} has no commit yet; commit the files to refactor first"
        )
    await _refuse_uncommitted(git, root)
    common = await git.out(root, "rev-parse", "--path-format=absolute", "--git-common-dir")
    branch = await git.run(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return Repository(
        root=root,
        cwd=cwd,
        common_dir=await _realpath(Path(common)),
        head=head.stdout.strip(),
        branch=branch.stdout.strip() if branch.code == 0 else None,
    )


def _real_folder(folder: Path) -> Path:
    if not folder.is_dir():
        raise NotARepository(f"--repo {folder}: not a directory; give the repository's folder")
    return Path(os.path.realpath(folder))


async def _realpath(path: Path) -> Path:
    return Path(await anyio.to_thread.run_sync(os.path.realpath, path))


async def _refuse_uncommitted(git: Git, root: Path) -> None:
    raw = await git.out(root, "status", "--porcelain=v1", "--untracked-files=no")
    changes = [line for line in raw.splitlines() if line.strip()]
    if not changes:
        return
    shown = "; ".join(line.strip() for line in changes[:_SHOWN_CHANGES])
    more = f" and {len(changes) - _SHOWN_CHANGES} more" if len(changes) > _SHOWN_CHANGES else ""
    raise UncommittedChanges(
        f"the repository at {root} has uncommitted changes ({shown}{more}). The workers branch "
        "from HEAD, so these changes would be missing from the result; commit them or "
        "`git stash` them, then run corral refactor again"
    )


async def select_files(git: Git, repo: Repository, patterns: Sequence[str]) -> list[SelectedFile]:
    """The tracked regular files matching `patterns` (git pathspecs; none: every file), sorted,
    each with its size in HEAD."""
    raw = await git.out(repo.cwd, "ls-files", "-s", "-z", "--full-name", "--", *patterns)
    entries: list[tuple[str, str]] = []
    for entry in raw.split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        mode, oid, _stage = meta.split(" ")
        if mode in _REGULAR_MODES:
            entries.append((path, oid))
    if not entries:
        wanted = ", ".join(patterns) if patterns else "(all files)"
        raise NoFilesSelected(
            f"no tracked file under {repo.cwd} matches --files {wanted}; "
            "`git ls-files -- PATTERN` shows what a pattern selects"
        )
    sizes = await _object_sizes(git, repo.root, [oid for _, oid in entries])
    return sorted(SelectedFile(path, size) for (path, _), size in zip(entries, sizes, strict=True))


async def _object_sizes(git: Git, root: Path, oids: Sequence[str]) -> list[int]:
    stdin = "".join(f"{oid}\n" for oid in oids).encode()
    raw = await git.out(root, "cat-file", "--batch-check=%(objectsize)", stdin=stdin)
    return [int(line) for line in raw.splitlines()]


async def check_new_branches(
    git: Git, repo: Repository, result: str, workers: Sequence[str]
) -> None:
    """Refuse the run's branches if git cannot create them: the result branch malformed, taken,
    or clashing with a worker branch or an existing ref (`a` and `a/b` cannot both exist)."""
    valid = await git.run(repo.root, "check-ref-format", "--branch", result, check=False)
    if valid.code != 0 or result.startswith("-"):
        raise BranchUnavailable(f"--branch {result!r} is not a valid branch name; choose another")
    for worker in workers:
        if _clashes(result, worker):
            raise BranchUnavailable(
                f"--branch {result} clashes with the worker branch {worker}; choose another name"
            )
    raw = await git.out(repo.root, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
    for existing in raw.splitlines():
        if _clashes(result, existing):
            raise BranchUnavailable(
                f"--branch {result} clashes with the existing branch {existing} (a branch cannot "
                "also be the folder of another); choose another --branch or delete that branch"
            )
        for worker in workers:
            if _clashes(worker, existing):
                raise BranchUnavailable(
                    f"the worker branch {worker} clashes with the existing branch {existing}; "
                    "choose another --run-id or delete that branch"
                )


def _clashes(one: str, other: str) -> bool:
    return one == other or one.startswith(f"{other}/") or other.startswith(f"{one}/")
