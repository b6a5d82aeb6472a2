"""The git commands of the refactor pipeline, run as real `git` processes with a deadline.

Every command gets the same guard rails: no hooks (the user's hooks would run in corral's
worktrees; the pipeline's check is the gate), no signing prompts, no automatic gc, no terminal
prompts, and none of the `GIT_*` variables that would point git at another repository. Commits
use the user's configured identity, or corral's when there is none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from ._errors import GitFailed

GIT_TIMEOUT = 120.0
"""Seconds any one git command may take (a checkout of a large repository included)."""
FALLBACK_IDENTITY = ("corral", "corral@localhost")
_GUARDS = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",  # a program the repository's own config names; status runs it
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gc.auto=0",
    "advice.detachedHead=false",
    "core.quotePath=false",
)
_SCRUBBED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)


@dataclass(frozen=True)
class GitResult:
    code: int
    stdout: str
    stderr: str


class Git:
    """Runs git in a given folder with the pipeline's guard rails."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        base = dict(os.environ if env is None else env)
        for name in _SCRUBBED:
            base.pop(name, None)
        base.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANGUAGE="C")
        self._env = base

    def with_identity(self, name: str, email: str) -> None:
        """Author and commit as `name <email>` from now on."""
        self._env.update(
            GIT_AUTHOR_NAME=name,
            GIT_AUTHOR_EMAIL=email,
            GIT_COMMITTER_NAME=name,
            GIT_COMMITTER_EMAIL=email,
        )

    async def run(
        self, cwd: Path, *args: str, check: bool = True, stdin: bytes | None = None
    ) -> GitResult:
        argv = ["git", *(f for guard in _GUARDS for f in ("-c", guard)), *args]
        with anyio.fail_after(GIT_TIMEOUT):
            done = await anyio.run_process(argv, cwd=cwd, env=self._env, input=stdin, check=False)
        result = GitResult(
            done.returncode,
            done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"),
        )
        if check and result.code != 0:
            said = (result.stderr or result.stdout).strip() or "no output"
            raise GitFailed(f"`git {' '.join(args)}` failed in {cwd} (exit {result.code}): {said}")
        return result

    async def out(self, cwd: Path, *args: str, stdin: bytes | None = None) -> str:
        """The command's stdout, without the final newline."""
        return (await self.run(cwd, *args, stdin=stdin)).stdout.rstrip("\n")


async def ensure_identity(git: Git, repo: Path) -> None:
    """Use corral's identity for commits if the repository has no user configured."""
    name = await git.run(repo, "config", "user.name", check=False)
    email = await git.run(repo, "config", "user.email", check=False)
    if name.code != 0 or email.code != 0:
        git.with_identity(*FALLBACK_IDENTITY)


async def changed_paths(git: Git, worktree: Path) -> list[str]:
    """Paths whose content differs from the worktree's HEAD, untracked files included."""
    raw = await git.out(worktree, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    entries = raw.split("\0")
    paths: list[str] = []
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if not entry:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":  # a rename's source follows as its own entry
            paths.append(entries[index])
            index += 1
    return sorted(set(paths))


async def commit_paths(git: Git, worktree: Path, paths: Sequence[str], message: str) -> str | None:
    """Commit exactly `paths` (changes and deletions) on the worktree's branch; the new commit,
    or None if they hold no change."""
    if not paths:
        return None
    await git.run(worktree, "add", "--all", "--", *paths)
    staged = await git.run(worktree, "diff", "--cached", "--quiet", check=False)
    if staged.code == 0:
        return None
    await git.run(worktree, "commit", "--quiet", "--no-verify", "-m", message)
    return await git.out(worktree, "rev-parse", "HEAD")


async def shortstat(git: Git, cwd: Path, base: str, tip: str) -> str:
    """`2 files changed, 4 insertions(+), 4 deletions(-)` between two commits."""
    return (await git.out(cwd, "diff", "--shortstat", base, tip)).strip()


async def files_changed(git: Git, cwd: Path, base: str, tip: str) -> list[str]:
    raw = await git.out(cwd, "diff", "--name-only", "-z", base, tip)
    return sorted(path for path in raw.split("\0") if path)


async def merge(git: Git, worktree: Path, branch: str, message: str) -> list[str] | None:
    """Merge `branch` into the worktree's HEAD: None if it merged, else the conflicting paths
    (the merge is aborted, so the worktree is as before)."""
    done = await git.run(
        worktree, "merge", "--no-ff", "--no-verify", "-m", message, branch, check=False
    )
    if done.code == 0:
        return None
    raw = await git.out(worktree, "diff", "--name-only", "-z", "--diff-filter=U")
    conflicts = sorted(path for path in raw.split("\0") if path)
    await git.run(worktree, "merge", "--abort", check=False)
    return conflicts or [f"(git merge failed: {(done.stderr or done.stdout).strip()})"]
