"""The `MemoryStore` seam and its in-memory twin.

A store keeps raw memories and insights per project. Forgetting a raw memory also drops every
insight that cites it: an insight is a merge of its sources, so one built on a forgotten fact
would carry it on; the next consolidation rebuilds it from what remains.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ._records import Insight, MemoryRecord


class MemoryStore(Protocol):
    """Where memories live. `project=None` means every project."""

    async def add(self, records: Sequence[MemoryRecord], *, cap: int) -> None:
        """Keep `records`; then drop each of their projects' oldest past `cap` memories."""
        ...

    async def memories(self, project: str | None) -> list[MemoryRecord]:
        """The raw memories, newest first."""
        ...

    async def insights(self, project: str | None) -> list[Insight]:
        """The consolidated insights, oldest first (the order consolidation gave them)."""
        ...

    async def get(self, item_id: str) -> MemoryRecord | Insight | None: ...

    async def forget(self, item_id: str) -> bool:
        """Remove a memory (and the insights citing it) or an insight; False if unknown."""
        ...

    async def clear(self, project: str | None) -> int:
        """Remove every memory and insight (of `project`); answer how many memories went."""
        ...

    async def forget_run(self, run_id: str) -> int:
        """Remove the memories run `run_id` left (and the insights citing them) in one
        transaction; answer how many memories went."""
        ...

    async def replace_insights(self, project: str, insights: Sequence[Insight], at: float) -> None:
        """Make `insights` the project's whole list, consolidated at `at`."""
        ...

    async def since_consolidation(self, project: str) -> int:
        """How many of the project's raw memories are newer than its last consolidation."""
        ...

    async def count(self, project: str) -> int:
        """How many memories and insights the project holds (one cheap query: recall asks it
        before it loads anything)."""
        ...


class InMemoryMemories:
    """A `MemoryStore` in a dict: for tests, and for code that needs no file."""

    def __init__(self) -> None:
        self._memories: dict[str, MemoryRecord] = {}
        self._insights: dict[str, Insight] = {}
        self._consolidated: dict[str, float] = {}

    async def add(self, records: Sequence[MemoryRecord], *, cap: int) -> None:
        for record in records:
            self._memories[record.memory_id] = record
        for project in {r.project for r in records}:
            for old in (await self.memories(project))[cap:]:
                del self._memories[old.memory_id]

    async def memories(self, project: str | None) -> list[MemoryRecord]:
        found = [m for m in self._memories.values() if project in (None, m.project)]
        return sorted(found, key=lambda m: (-m.created_at, m.memory_id))

    async def insights(self, project: str | None) -> list[Insight]:
        return [i for i in self._insights.values() if project in (None, i.project)]

    async def get(self, item_id: str) -> MemoryRecord | Insight | None:
        return self._memories.get(item_id) or self._insights.get(item_id)

    async def forget(self, item_id: str) -> bool:
        if self._insights.pop(item_id, None) is not None:
            return True
        if self._memories.pop(item_id, None) is None:
            return False
        for insight in list(self._insights.values()):
            if item_id in insight.source_ids:
                del self._insights[insight.insight_id]
        return True

    async def forget_run(self, run_id: str) -> int:
        gone = {m.memory_id for m in self._memories.values() if m.run_id == run_id}
        for memory_id in gone:
            del self._memories[memory_id]
        for insight in list(self._insights.values()):
            if gone.intersection(insight.source_ids):
                del self._insights[insight.insight_id]
        return len(gone)

    async def clear(self, project: str | None) -> int:
        gone = await self.memories(project)
        for memory in gone:
            del self._memories[memory.memory_id]
        for insight in await self.insights(project):
            del self._insights[insight.insight_id]
        return len(gone)

    async def replace_insights(self, project: str, insights: Sequence[Insight], at: float) -> None:
        for old in await self.insights(project):
            del self._insights[old.insight_id]
        self._insights.update((i.insight_id, i) for i in insights)
        self._consolidated[project] = at

    async def since_consolidation(self, project: str) -> int:
        after = self._consolidated.get(project, float("-inf"))
        return sum(1 for m in await self.memories(project) if m.created_at > after)

    async def count(self, project: str) -> int:
        found = [m for m in self._memories.values() if m.project == project]
        return len(found) + len(await self.insights(project))
