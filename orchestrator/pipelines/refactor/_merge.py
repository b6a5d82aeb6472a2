"""Merging the passing workers' branches into the result, in worker order, in its own worktree.

Each passing branch is merged with a merge commit, so the result branch holds every worker's own
commit. A merge that conflicts is aborted and that worker is reported with the conflicting files;
the others still merge. The result branch is created only once something merged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ._git import Git, merge
from ._outcome import CONFLICT, MERGED, PASSED, WorkerOutcome


async def merge_workers(
    git: Git, worktree: Path, outcomes: Sequence[WorkerOutcome], run_id: str
) -> list[WorkerOutcome]:
    """The outcomes after merging every `passed` one into `worktree`'s HEAD."""
    merged: list[WorkerOutcome] = []
    for outcome in outcomes:
        if outcome.status != PASSED:
            merged.append(outcome)
            continue
        message = f"corral refactor {run_id}: merge worker {outcome.index} ({outcome.branch})"
        conflicts = await merge(git, worktree, outcome.branch, message)
        if conflicts is None:
            merged.append(replace(outcome, status=MERGED))
        else:
            why = f"merging it conflicted in {', '.join(conflicts)}; its branch is kept as is"
            detail = f"{why}; {outcome.detail}" if outcome.detail else why
            merged.append(replace(outcome, status=CONFLICT, detail=detail))
    return merged


async def create_result_branch(git: Git, worktree: Path, name: str) -> str:
    """Create branch `name` at the worktree's HEAD (the merges); answer that commit."""
    await git.run(worktree, "branch", name, "HEAD")
    return await git.out(worktree, "rev-parse", "HEAD")
