"""Deleting a run, the same on every store: everything of the run goes in one transaction, other
runs stay as they were, and a run that may still be carried on is refused unless forced."""

from __future__ import annotations

import os
import time

import pytest

from corral.agents._store import (
    DeletedRun,
    ItemRecord,
    LeaseRecord,
    LedgerEntry,
    RunActive,
    Store,
    UnknownAgent,
    UnknownRun,
    this_host,
)
from corral.tools import InvalidInput
from tests.store.conformance.test_store import make_agent, make_run

pytestmark = pytest.mark.anyio


async def fill(store: Store, run_id: str, *, status: str = "done") -> list[str]:
    """A run with a parent and a child agent, events, two items, the ledger and a lease."""
    parent, child = f"{run_id}-a", f"{run_id}-b"
    await store.create_run(make_run(run_id, status=status))
    await store.create_agent(make_agent(parent, run_id))
    await store.create_agent(make_agent(child, run_id, parent_id=parent))
    for agent_id in (parent, child):
        await store.append_events(agent_id, [("message", {"n": 1}), ("message", {"n": 2})], at=1)
        call = LedgerEntry(
            call_id="c1", agent_id=agent_id, tool="shell", arguments="{}", started_at=1.0
        )
        await store.ledger_start(call)
        await store.ledger_finish(agent_id, "c1", output="ok", success=True, at=2.0)
    items = [ItemRecord(run_id=run_id, index=i, input={"i": i}) for i in range(2)]
    await store.put_items(run_id, items)
    await store.update_item(run_id, 0, agent_id=child, status="done")
    gone = LeaseRecord(
        run_id=run_id,
        holder=f"{run_id}-h",
        host=this_host(),
        pid=os.getpid(),
        since=1.0,
        heartbeat_at=1.0,
        timeout=1.0,
    )
    await store.take_lease(gone)
    await store.release_lease(run_id, gone.holder, at=2.0)
    return [parent, child]


async def snapshot(store: Store, run_id: str, agents: list[str]) -> tuple[object, ...]:
    return (
        await store.get_run(run_id),
        await store.list_agents(run_id),
        await store.run_events(run_id),
        await store.items(run_id),
        [await store.ledger(a) for a in agents],
        await store.leases(run_id),
    )


async def test_deleting_a_run_removes_all_of_it_and_leaves_other_runs_as_they_were(
    store: Store,
) -> None:
    gone = await fill(store, "run-gone")
    kept = await fill(store, "run-kept")
    before = await snapshot(store, "run-kept", kept)
    answer = await store.delete_run("run-gone", at=time.time())
    assert answer == DeletedRun(run_id="run-gone", agents=2, events=4, items=2, ledger=2, leases=1)
    assert await store.get_run("run-gone") is None
    assert [r.run_id for r in await store.list_runs()] == ["run-kept"]
    assert await store.leases("run-gone") == []
    for agent_id in gone:
        assert await store.get_agent(agent_id) is None
        with pytest.raises(UnknownAgent):
            await store.events(agent_id)
    with pytest.raises(UnknownRun):
        await store.run_events("run-gone")
    assert await snapshot(store, "run-kept", kept) == before


async def test_a_deleted_run_id_can_be_used_again_from_the_first_sequence_number(
    store: Store,
) -> None:
    await fill(store, "run-1")
    await store.delete_run("run-1", at=time.time())
    agents = await fill(store, "run-1")
    assert [e.run_seq for e in await store.run_events("run-1")][:2] == [1, 2]
    assert [e.seq for e in await store.events(agents[0])] == [1, 2]


async def test_deleting_an_unknown_run_is_the_callers_mistake(store: Store) -> None:
    with pytest.raises(UnknownRun, match="no run named 'nope'"):
        await store.delete_run("nope", at=time.time())


@pytest.mark.parametrize("status", ["queued", "pending", "running"])
async def test_a_run_that_may_still_run_is_refused_unless_forced(store: Store, status: str) -> None:
    await fill(store, "run-1", status=status)
    with pytest.raises(RunActive, match=f"run run-1 in .* is {status}.*--force") as caught:
        await store.delete_run("run-1", at=time.time())
    assert isinstance(caught.value, InvalidInput)
    assert (await store.get_run("run-1")) is not None
    assert len(await store.run_events("run-1")) == 4
    forced = await store.delete_run("run-1", at=time.time(), force=True)
    assert forced.events == 4 and await store.get_run("run-1") is None


async def test_a_run_whose_live_lease_holder_runs_is_refused_even_when_it_looks_finished(
    store: Store,
) -> None:
    await fill(store, "run-1")
    now = time.time()
    live = LeaseRecord(
        run_id="run-1",
        holder="alive",
        host="elsewhere",
        pid=1,
        since=now,
        heartbeat_at=now,
        timeout=60.0,
    )
    await store.take_lease(live)
    with pytest.raises(RunActive, match=r"being carried on by alive .*--force"):
        await store.delete_run("run-1", at=now + 1)
    # Silent past its timeout, the holder is gone: the run is deleted without force.
    assert (await store.delete_run("run-1", at=now + 120)).leases == 2


async def test_a_run_other_runs_point_at_is_refused_even_when_forced(store: Store) -> None:
    agents = await fill(store, "run-1")
    await store.create_run(make_run("run-2", status="done"))
    await store.create_agent(make_agent("run-2-a", "run-2", parent_id=agents[0]))
    for force in (False, True):
        with pytest.raises(RunActive, match=r"run-2 .* point at agents of run run-1"):
            await store.delete_run("run-1", at=time.time(), force=force)
    assert len(await store.list_agents("run-1")) == 2


def test_what_a_delete_answered_is_saved_for_a_retry_after_a_lost_commit() -> None:
    from corral.agents._store._pg_rows import decode_result, encode_result

    answer = DeletedRun(run_id="run-1", agents=2, events=40, items=3, ledger=5, leases=1)
    assert decode_result(encode_result(answer)) == answer
