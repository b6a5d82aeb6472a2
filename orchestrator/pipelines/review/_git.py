"""The git a review needs: the repository root, a range resolved to commits, its diff, and a
read-only checkout of the range's head for the reviewers.

Everything runs `git` as a subprocess with a deadline. The user's working tree is never touched:
when it is not at the range's head (another commit checked out, or uncommitted changes), the
reviewers get a temporary detached worktree, removed again when the review ends. Repository
hooks are switched off for every command, so making that worktree runs none of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from ._errors import BadRange, GitFailed, NotARepository

GIT_TIMEOUT = 120.0
CLEANUP_TIMEOUT = 30.0
# fsmonitor names a program of the repository's own config, which git status and diff run.
_GIT = (
    "git",
    "-c",
    "core.quotepath=off",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
)
DIFF_OPTIONS = (
    "--no-color",
    "-U3",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


@dataclass(frozen=True)
class GitRange:
    """A range as the user wrote it, and the commits its two ends name."""

    text: str
    base: str
    head: str


@dataclass(frozen=True)
class _Done:
    code: int
    stdout: str
    stderr: str

    @property
    def said(self) -> str:
        """git's own message: its first `fatal:` or `error:` line, else its first line."""
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith(("fatal:", "error:"))]
        return (errors or lines or [f"exit code {self.code}"])[0]


async def _git(cwd: Path, *args: str) -> _Done:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        with anyio.fail_after(GIT_TIMEOUT):
            done = await anyio.run_process(
                [*_GIT, *args], cwd=cwd, env=env, check=False, stdin=subprocess.DEVNULL
            )
    except FileNotFoundError as exc:
        raise GitFailed(
            "git is not installed or not on PATH; install git to review a range"
        ) from exc
    except TimeoutError as exc:
        raise GitFailed(f"`git {' '.join(args)}` took more than {GIT_TIMEOUT:.0f} s") from exc
    return _Done(done.returncode, _text(done.stdout), _text(done.stderr))


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


async def repo_root(folder: Path) -> Path:
    """The top of the git repository that holds `folder`."""
    done = await _git(folder, "rev-parse", "--show-toplevel")
    if done.code != 0:
        raise NotARepository(
            f"{folder} is not inside a git repository ({done.said}); give --repo DIR of a "
            "git checkout, or review a patch file with --patch FILE"
        )
    return Path(done.stdout.strip())


async def resolve_range(root: Path, text: str) -> GitRange:
    """`BASE..HEAD` (or `BASE...HEAD`: from their merge base) resolved to two commits."""
    symmetric = "..." in text
    base, sep, head = text.partition("..." if symmetric else "..")
    if not sep:
        raise BadRange(f"--range {text!r} is not a range; write BASE..HEAD, e.g. main..HEAD")
    base_sha = await _commit(root, text, base or "HEAD")
    head_sha = await _commit(root, text, head or "HEAD")
    if symmetric:
        done = await _git(root, "merge-base", base_sha, head_sha)
        if done.code != 0:
            raise BadRange(f"--range {text}: {base} and {head} share no history ({done.said})")
        base_sha = done.stdout.strip()
    return GitRange(text, base_sha, head_sha)


async def _commit(root: Path, text: str, rev: str) -> str:
    if rev.startswith("-"):
        raise BadRange(f"--range {text}: {rev!r} is not a revision name")
    done = await _git(root, "rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}")
    if done.code != 0:
        raise BadRange(
            f"--range {text}: git cannot find revision {rev!r} in {root} ({done.said}); "
            "name an existing branch, tag or commit"
        )
    return done.stdout.strip()


async def range_diff(root: Path, span: GitRange) -> str:
    """The unified diff from the range's base to its head."""
    done = await _git(root, "diff", *DIFF_OPTIONS, span.base, span.head, "--")
    if done.code != 0:
        raise GitFailed(f"git diff {span.text} failed: {done.said}")
    return done.stdout


async def is_checked_out(root: Path, commit: str) -> bool:
    """Whether the working tree is `commit` exactly: HEAD there and no tracked file changed."""
    head = await _git(root, "rev-parse", "--verify", "HEAD")
    if head.code != 0 or head.stdout.strip() != commit:
        return False
    status = await _git(root, "status", "--porcelain", "--untracked-files=no")
    return status.code == 0 and not status.stdout.strip()


def _temporary_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="corral-review-")).resolve()


@asynccontextmanager
async def checkout_at(root: Path, commit: str) -> AsyncIterator[Path]:
    """A folder holding `commit`: the repository itself if it is there, else a temporary
    worktree that is removed on the way out."""
    if await is_checked_out(root, commit):
        yield root
        return
    holder = await anyio.to_thread.run_sync(_temporary_folder)
    tree = holder / "head"
    try:
        done = await _git(root, "worktree", "add", "--detach", "--quiet", str(tree), commit)
        if done.code != 0:
            raise GitFailed(f"cannot make a worktree at {commit[:12]}: {done.said}")
        yield tree
    finally:
        with anyio.move_on_after(CLEANUP_TIMEOUT, shield=True):
            await _git(root, "worktree", "remove", "--force", str(tree))
            await _git(root, "worktree", "prune")
            await anyio.to_thread.run_sync(shutil.rmtree, holder, True)
