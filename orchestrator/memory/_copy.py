"""Copying memories between journals, for `corral journal copy`: they move with the runs.

Raw memories keep their ids, so a copy run again changes nothing. Insights come with them,
with their source links, as long as every memory they cite is at the destination (an insight
whose source stayed behind would cite nothing there); the destination's own insights of a
project are kept beside the copied ones.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ._records import Insight
from ._store import MemoryStore


@dataclass(frozen=True)
class MemoryCopy:
    """What a copy of memories did."""

    memories: int
    insights: int


async def copy_memories(
    source: MemoryStore, dest: MemoryStore, *, run_ids: Collection[str] | None = None
) -> MemoryCopy:
    """Copy the memories of `run_ids` (default: every memory) and the insights they back."""
    chosen = [m for m in await source.memories(None) if run_ids is None or m.run_id in run_ids]
    projects = {m.project for m in chosen} | (
        {i.project for i in await source.insights(None)} if run_ids is None else set()
    )
    for project in sorted(projects):
        mine = [m for m in chosen if m.project == project]
        if mine:
            # Never drops a copied memory: the cap is what the destination will then hold.
            held = await dest.memories(project)
            await dest.add(mine, cap=len(held) + len(mine))
    copied = 0
    for project in sorted(projects):
        copied += await _copy_insights(source, dest, project)
    return MemoryCopy(memories=len(chosen), insights=copied)


async def _copy_insights(source: MemoryStore, dest: MemoryStore, project: str) -> int:
    there = {m.memory_id for m in await dest.memories(project)}
    held = await dest.insights(project)
    have = {i.insight_id for i in held}
    new = [
        i
        for i in await source.insights(project)
        if i.insight_id not in have and set(i.source_ids) <= there
    ]
    if not new:
        return 0
    merged = [*held, *new]
    await dest.replace_insights(project, merged, _consolidated_at(merged))
    return len(new)


def _consolidated_at(insights: list[Insight]) -> float:
    # An insight is stamped with its consolidation's time: the newest is the last one.
    return max(i.created_at for i in insights)
