"""Memories move with the journal: `copy_memories` between stores, and reading a source
journal without ever writing to it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from corral.agents import open_sqlite_store
from corral.orchestrator.memory import Insight, MemoryRecord, copy_memories, open_memories

pytestmark = pytest.mark.anyio


def record(memory_id: str, run_id: str, at: float, project: str = "/repo") -> MemoryRecord:
    return MemoryRecord(
        memory_id=memory_id,
        project=project,
        text=f"fact {memory_id}",
        files=("Makefile",),
        run_id=run_id,
        agent_id="agent-1",
        created_at=at,
        embedding=(0.25, 0.5, -1.0),
    )


def insight(insight_id: str, sources: tuple[str, ...], at: float = 5.0) -> Insight:
    return Insight(
        insight_id=insight_id, project="/repo", text="merged", source_ids=sources, created_at=at
    )


async def test_copy_moves_memories_and_insights_with_their_links_into_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    source = tmp_path / "journal.sqlite"
    async with open_memories(source) as src:
        await src.add([record("m1", "run-a", 1.0), record("m2", "run-b", 2.0)], cap=10)
        await src.add([record("x1", "run-a", 3.0, "/other")], cap=10)
        await src.replace_insights("/repo", [insight("i1", ("m1", "m2"))], 5.0)
    for _ in range(2):  # a second copy changes nothing
        async with (
            open_memories(source, read_only=True) as src,
            open_memories(postgres_url) as dst,
        ):
            done = await copy_memories(src, dst)
    assert done.memories == 3
    async with open_memories(postgres_url) as dst, open_memories(source) as src:
        assert await dst.memories(None) == await src.memories(None)
        assert await dst.insights("/repo") == [insight("i1", ("m1", "m2"))]
        assert await dst.since_consolidation("/repo") == 0


async def test_copying_some_runs_leaves_out_the_insights_whose_sources_stayed_behind(
    tmp_path: Path,
) -> None:
    source, dest = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    async with open_memories(source) as src:
        await src.add([record("m1", "run-a", 1.0), record("m2", "run-b", 2.0)], cap=10)
        await src.replace_insights(
            "/repo", [insight("i1", ("m1",)), insight("i2", ("m1", "m2"))], 5.0
        )
    async with open_memories(source, read_only=True) as src, open_memories(dest) as dst:
        done = await copy_memories(src, dst, run_ids=["run-a"])
        assert (done.memories, done.insights) == (1, 1)
        assert [m.memory_id for m in await dst.memories(None)] == ["m1"]
        assert [i.insight_id for i in await dst.insights(None)] == ["i1"]


async def test_reading_a_journal_without_memory_tables_writes_nothing_to_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    async with open_sqlite_store(path):
        pass
    path.chmod(0o444)
    async with open_memories(path, read_only=True) as src:
        assert await src.memories(None) == [] and await src.insights(None) == []
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    assert "memories" not in tables
