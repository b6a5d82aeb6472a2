"""The memory store's contract, for the in-memory twin, SQLite in the journal's file, and the
shared PostgreSQL journal (a fresh database per test, see tests/_postgres.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from corral.agents import open_sqlite_store
from corral.orchestrator.memory import (
    InMemoryMemories,
    Insight,
    MemoryRecord,
    MemoryStore,
    open_memories,
    open_sqlite_memories,
)

pytestmark = pytest.mark.anyio


def record(memory_id: str, at: float, project: str = "/repo", text: str = "a fact") -> MemoryRecord:
    return MemoryRecord(
        memory_id=memory_id,
        project=project,
        text=text,
        files=("src/a.py",),
        run_id="run-1",
        agent_id="agent-1",
        created_at=at,
        embedding=(0.5, -0.25, 1.0),
    )


def insight(insight_id: str, sources: tuple[str, ...], project: str = "/repo") -> Insight:
    return Insight(
        insight_id=insight_id, project=project, text="merged", source_ids=sources, created_at=9.0
    )


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryStore]:
    if request.param == "memory":
        yield InMemoryMemories()
        return
    target: str | Path = tmp_path / "journal.sqlite"
    if request.param == "postgres":
        target = request.getfixturevalue("postgres_url")
    async with open_memories(target) as opened:
        yield opened


async def test_memories_come_back_whole_newest_first_per_project(store: MemoryStore) -> None:
    await store.add([record("m1", 1.0), record("m2", 2.0), record("x1", 3.0, "/other")], cap=10)
    assert [m.memory_id for m in await store.memories("/repo")] == ["m2", "m1"]
    assert [m.memory_id for m in await store.memories(None)] == ["x1", "m2", "m1"]
    assert await store.get("m1") == record("m1", 1.0)


async def test_past_the_cap_the_oldest_memories_of_that_project_go(store: MemoryStore) -> None:
    await store.add([record("x1", 0.0, "/other")], cap=2)
    await store.add([record(f"m{i}", float(i)) for i in range(5)], cap=2)
    assert [m.memory_id for m in await store.memories("/repo")] == ["m4", "m3"]
    assert [m.memory_id for m in await store.memories("/other")] == ["x1"]


async def test_forgetting_a_memory_drops_the_insights_citing_it(store: MemoryStore) -> None:
    await store.add([record("m1", 1.0), record("m2", 2.0)], cap=10)
    await store.replace_insights("/repo", [insight("i1", ("m1", "m2")), insight("i2", ("m2",))], 5)
    assert await store.forget("m1")
    assert [i.insight_id for i in await store.insights("/repo")] == ["i2"]
    assert await store.get("m1") is None
    assert not await store.forget("m1")
    assert await store.forget("i2") and await store.insights("/repo") == []


async def test_consolidation_replaces_the_list_and_counts_what_came_since(
    store: MemoryStore,
) -> None:
    await store.add([record("m1", 1.0), record("m2", 2.0)], cap=10)
    assert await store.since_consolidation("/repo") == 2
    await store.replace_insights("/repo", [insight("i1", ("m1",))], 2.0)
    await store.add([record("m3", 3.0)], cap=10)
    assert await store.since_consolidation("/repo") == 1
    await store.replace_insights("/repo", [insight("i2", ("m3",)), insight("i3", ("m1",))], 3.0)
    assert [i.insight_id for i in await store.insights("/repo")] == ["i2", "i3"]


async def test_clear_empties_one_project_and_leaves_the_others(store: MemoryStore) -> None:
    await store.add([record("m1", 1.0), record("x1", 1.0, "/other")], cap=10)
    await store.replace_insights("/repo", [insight("i1", ("m1",))], 2.0)
    assert await store.clear("/repo") == 1
    assert await store.memories("/repo") == [] and await store.insights("/repo") == []
    assert [m.memory_id for m in await store.memories(None)] == ["x1"]


async def test_memories_share_the_journals_file_without_touching_its_tables(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    async with open_sqlite_store(path) as journal, open_sqlite_memories(path) as memories:
        await memories.add([record("m1", 1.0)], cap=10)
        assert await journal.list_runs() == []
    async with open_sqlite_memories(path) as reopened:
        assert [m.memory_id for m in await reopened.memories(None)] == ["m1"]


async def test_a_memory_store_opened_first_leaves_a_journal_runs_can_open(tmp_path: Path) -> None:
    path = tmp_path / "home" / "journal.sqlite"
    async with open_sqlite_memories(path) as memories:
        await memories.add([record("m1", 1.0)], cap=10)
    async with open_sqlite_store(path) as journal:
        assert await journal.list_runs() == []
    async with open_sqlite_store(path, read_only=True) as journal:
        assert await journal.list_runs() == []


async def test_a_memory_keeps_a_nul_character_and_its_vector_exactly(
    store: MemoryStore,
) -> None:
    odd = record("m1", 1.0, text="a NUL \x00 in it").model_copy(
        update={"files": ("a\x00b.py",), "embedding": (0.1, -2.5, 3.0e-8)}
    )
    await store.add([odd], cap=10)
    got = await store.get("m1")
    assert isinstance(got, MemoryRecord)
    assert (got.text, got.files) == (odd.text, odd.files)
    assert got.embedding == pytest.approx(odd.embedding, rel=1e-6)


async def test_count_is_how_many_memories_and_insights_a_project_holds(store: MemoryStore) -> None:
    assert await store.count("/repo") == 0
    await store.add([record("m1", 1.0), record("m2", 2.0), record("x1", 3.0, "/other")], cap=10)
    await store.replace_insights("/repo", [insight("i1", ("m1",))], 5)
    assert await store.count("/repo") == 3
    assert await store.count("/other") == 1


async def test_forgetting_a_run_drops_its_memories_and_the_insights_citing_them_only(
    store: MemoryStore,
) -> None:
    theirs = record("x1", 3.0, "/other").model_copy(update={"run_id": "run-2"})
    await store.add([record("m1", 1.0), record("m2", 2.0), theirs], cap=10)
    mine = record("m3", 4.0).model_copy(update={"run_id": "run-2"})
    await store.add([mine], cap=10)
    await store.replace_insights("/repo", [insight("i1", ("m1", "m3")), insight("i2", ("m3",))], 5)
    await store.replace_insights("/other", [insight("i3", ("x1",), "/other")], 5)
    assert await store.forget_run("run-1") == 2
    assert [m.memory_id for m in await store.memories(None)] == ["m3", "x1"]
    assert sorted(i.insight_id for i in await store.insights(None)) == ["i2", "i3"]
    assert await store.forget_run("run-1") == 0
    assert await store.forget_run("run-2") == 2
    assert await store.memories(None) == [] and await store.insights(None) == []


async def test_every_store_keeps_the_prompt_version_of_each_memory_and_insight(
    store: MemoryStore,
) -> None:
    version = "sha256:" + "ab" * 32
    made = record("m1", 1.0).model_copy(update={"prompt_version": version})
    await store.add([made, record("m2", 2.0)], cap=10)
    merged = insight("i1", ("m1",)).model_copy(update={"prompt_version": version})
    await store.replace_insights("/repo", [merged], at=10.0)
    assert await store.get("m1") == made
    assert (await store.get("m2")) == record("m2", 2.0)  # from before versions: none
    assert await store.insights("/repo") == [merged]
    assert await store.get("i1") == merged
