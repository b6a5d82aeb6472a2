"""The SQLite journal numbers each agent's events without a gap whatever else wrote to the file:
another connection's appends, an operation that fails beside appends in one transaction (the
batch then runs again with a savepoint per job), and a run deleted and made again."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from corral.agents._store import (
    DuplicateRecord,
    LedgerEntry,
    RunRecord,
    Store,
    open_sqlite_store,
)
from tests._journal import seed_agent

pytestmark = pytest.mark.anyio

DEADLINE = 10


async def seed(store: Store, run_id: str = "run-1", *agent_ids: str) -> None:
    """A finished run (so it may be deleted) with `agent_ids` in it."""
    await store.create_run(
        RunRecord(run_id=run_id, kind="exec", status="done", created_at=1, updated_at=1, config={})
    )
    for agent_id in agent_ids or ("a",):
        await seed_agent(store, agent_id, run_id)


async def seqs(store: Store, agent_id: str = "a") -> list[tuple[int, int]]:
    return [(e.seq, e.run_seq) for e in await store.events(agent_id)]


async def test_appends_through_two_connections_to_one_file_stay_gap_free(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with anyio.fail_after(DEADLINE):
        async with open_sqlite_store(path) as one, open_sqlite_store(path) as two:
            await seed(one, "run-1", "a", "b")
            for n in range(3):
                await one.append_events("a", [("x", {"n": n}), ("y", {"n": n})], at=1.0)
                await two.append_event("a", "z", {"n": n}, at=1.0)
                await two.append_event("b", "z", {"n": n}, at=1.0)
            assert await seqs(one) == [(n, n + (n - 1) // 3) for n in range(1, 10)]
            assert [e.run_seq for e in await one.run_events("run-1")] == list(range(1, 13))


async def test_an_operation_that_fails_beside_appends_leaves_the_next_seq_right(
    tmp_path: Path,
) -> None:
    entry = LedgerEntry(call_id="c", agent_id="a", tool="t", arguments="{}", started_at=1)
    with anyio.fail_after(DEADLINE):
        async with open_sqlite_store(tmp_path / "journal.sqlite") as store:
            await seed(store)
            await store.append_events("a", [("x", {})], at=1.0, ledger_starts=[entry])
            outcomes: list[object] = []

            async def append(kind: str, starts: list[LedgerEntry]) -> None:
                try:
                    await store.append_events("a", [(kind, {})], at=1.0, ledger_starts=starts)
                    outcomes.append(kind)
                except DuplicateRecord:
                    outcomes.append(f"{kind} refused")

            # Started in one pass of the loop: they share a transaction, the middle one fails
            # after its event went in (its ledger entry is taken) and is undone alone.
            async with anyio.create_task_group() as tg:
                tg.start_soon(append, "first", [])
                tg.start_soon(append, "taken", [entry])
                tg.start_soon(append, "last", [])

            assert sorted(map(str, outcomes)) == ["first", "last", "taken refused"]
            assert [e.kind for e in await store.events("a")] == ["x", "first", "last"]
            assert await seqs(store) == [(1, 1), (2, 2), (3, 3)]
            await store.append_event("a", "after", {}, at=1.0)
            assert await seqs(store) == [(1, 1), (2, 2), (3, 3), (4, 4)]


async def test_a_run_deleted_and_made_again_numbers_its_events_from_one(tmp_path: Path) -> None:
    with anyio.fail_after(DEADLINE):
        async with open_sqlite_store(tmp_path / "journal.sqlite") as store:
            await seed(store)
            await store.append_events("a", [("x", {}), ("y", {})], at=1.0)
            await store.delete_run("run-1", at=2.0)
            await seed(store)
            await store.append_event("a", "x", {}, at=3.0)
            assert await seqs(store) == [(1, 1)]
