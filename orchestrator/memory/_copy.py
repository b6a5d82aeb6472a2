"""Copying memories between journals, for `corral journal copy`: they move with the runs.

Raw memories keep their ids, so a copy run again changes nothing; an id the destination
already holds keeps what it holds, so a copied journal cannot rewrite a memory. Insights come
with them, with their source links, as long as every memory they cite is at the destination (an
insight whose source stayed behind would cite nothing there); the destination's own insights of
a project are kept beside the copied ones. The source is read whole before anything is written:
a row it cannot read (a journal made by hand) copies nothing.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from corral.tools import InvalidInput

from ._records import Insight, MemoryRecord
from ._store import MemoryStore


class UnreadableMemories(InvalidInput):
    """The source journal holds a memory or insight row that is not one corral wrote."""


@dataclass(frozen=True)
class MemoryCopy:
    """What a copy of memories did."""

    memories: int
    insights: int
    kept: int = 0
    """Memories left out because the destination holds another under the same id."""


async def copy_memories(
    source: MemoryStore, dest: MemoryStore, *, run_ids: Collection[str] | None = None
) -> MemoryCopy:
    """Copy the memories of `run_ids` (default: every memory) and the insights they back."""
    everything, insights = await _read(source)
    chosen = [m for m in everything if run_ids is None or m.run_id in run_ids]
    projects = {m.project for m in chosen} | (
        {i.project for i in insights} if run_ids is None else set()
    )
    # The stores write a memory by its id, replacing what holds it: an id the destination
    # has (in any project) keeps what it has, so a copied journal can rewrite no memory.
    held_by_id = {m.memory_id: m for m in await dest.memories(None)}
    taken = set(held_by_id)
    for project in sorted(projects):
        mine = [m for m in chosen if m.project == project and m.memory_id not in taken]
        if mine:
            # Never drops a copied memory: the cap is what the destination will then hold.
            held = await dest.memories(project)
            await dest.add(mine, cap=len(held) + len(mine))
    copied = 0
    taken_insights = {i.insight_id for i in await dest.insights(None)}
    for project in sorted(projects):
        mine_insights = [i for i in insights if i.project == project]
        copied += await _copy_insights(mine_insights, dest, project, taken_insights)
    clashed = [m for m in chosen if m.memory_id in taken and _differ(m, held_by_id[m.memory_id])]
    return MemoryCopy(memories=len(chosen) - len(clashed), insights=copied, kept=len(clashed))


def _differ(copied: MemoryRecord, held: MemoryRecord) -> bool:
    # Not the embedding: PostgreSQL keeps float32, so a copy made before reads back rounded.
    fields = ("project", "text", "files", "run_id", "agent_id", "created_at")
    return any(getattr(copied, name) != getattr(held, name) for name in fields)


async def _read(source: MemoryStore) -> tuple[list[MemoryRecord], list[Insight]]:
    try:
        return await source.memories(None), await source.insights(None)
    except (ValueError, TypeError, OverflowError) as exc:
        reason = " ".join(str(exc).split())[:200]
        raise UnreadableMemories(
            f"the source journal holds a memory corral cannot read ({reason}); no memory was "
            "copied. Remove the row from its memories or memory_insights table and copy again"
        ) from exc


async def _copy_insights(
    insights: list[Insight], dest: MemoryStore, project: str, taken: set[str]
) -> int:
    there = {m.memory_id for m in await dest.memories(project)}
    held = await dest.insights(project)
    new = [i for i in insights if i.insight_id not in taken and set(i.source_ids) <= there]
    if not new:
        return 0
    merged = [*held, *new]
    await dest.replace_insights(project, merged, _consolidated_at(merged))
    return len(new)


def _consolidated_at(insights: list[Insight]) -> float:
    # An insight is stamped with its consolidation's time: the newest is the last one.
    return max(i.created_at for i in insights)
