"""The run's git worktrees: made in one temporary folder outside the repository, always removed.

Each worker's worktree is checked out on its own new branch; the result's starts detached and gets
its branch only once something is merged. `open_worktrees` removes every worktree it made
(`git worktree remove --force`, then `prune`), deletes the branches that never got a commit of
their own, and deletes the folder, even when the run fails or is cancelled: the cleanup is
shielded and has a deadline. The user's working tree and checked-out branch are never used.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.to_thread

from ._git import Git
from ._repo import Repository

CLEANUP_TIMEOUT = 60.0
logger = logging.getLogger(__name__)


class Worktrees:
    """The worktrees and branches one run has made so far."""

    def __init__(self, git: Git, repo: Repository, folder: Path) -> None:
        self.git = git
        self.repo = repo
        self.folder = folder
        self._paths: list[Path] = []
        self._branches: list[str] = []

    async def add_detached(self, name: str) -> Path:
        """A worktree at HEAD with no branch."""
        path = self.folder / name
        self._paths.append(path)
        await self.git.run(self.repo.root, "worktree", "add", "--detach", str(path), self.repo.head)
        return path

    async def add_branch(self, name: str, branch: str) -> Path:
        """A worktree on `branch`, a new branch made at HEAD."""
        path = self.folder / name
        self._paths.append(path)
        self._branches.append(branch)
        root = self.repo.root
        await self.git.run(root, "worktree", "add", "-b", branch, str(path), self.repo.head)
        return path

    async def remove_all(self) -> None:
        """Remove every worktree, forget them in git, drop branches without commits of their
        own, and delete the folder. Problems are logged; cleanup goes on."""
        root = self.repo.root
        for path in reversed(self._paths):
            done = await self.git.run(root, "worktree", "remove", "--force", str(path), check=False)
            if done.code != 0 and path.exists():
                logger.warning("could not remove worktree %s: %s", path, done.stderr.strip())
        await self.git.run(root, "worktree", "prune", check=False)
        for branch in self._branches:
            tip = await self.git.run(root, "rev-parse", "--verify", "--quiet", branch, check=False)
            if tip.code == 0 and tip.stdout.strip() == self.repo.head:
                await self.git.run(root, "branch", "--quiet", "-D", branch, check=False)
        await anyio.to_thread.run_sync(lambda: shutil.rmtree(self.folder, ignore_errors=True))


@asynccontextmanager
async def open_worktrees(
    git: Git, repo: Repository, run_id: str, parent: Path | None = None
) -> AsyncIterator[Worktrees]:
    """A temporary folder (in `parent`, default the system's) for the run's worktrees."""
    made = await anyio.to_thread.run_sync(
        lambda: Path(tempfile.mkdtemp(prefix=f"corral-refactor-{run_id}-", dir=parent)).resolve()
    )
    worktrees = Worktrees(git, repo, made)
    try:
        yield worktrees
    finally:
        with anyio.move_on_after(CLEANUP_TIMEOUT, shield=True):
            await worktrees.remove_all()
