"""Writes that go to the journal together: a response's events in one `append_events`, and a
tool call's outcome with its result event in one `ledger_finish`; all or none, in both stores."""

from __future__ import annotations

import pytest

from corral.agents._store import (
    AgentRecord,
    DuplicateRecord,
    InvalidRecord,
    LedgerEntry,
    RunRecord,
    Store,
    UnknownAgent,
    UnknownCall,
)

NAN = float("nan")


async def seed(store: Store, *agent_ids: str) -> None:
    await store.create_run(
        RunRecord(
            run_id="run-1", kind="exec", status="running", created_at=1, updated_at=1, config={}
        )
    )
    for agent_id in agent_ids:
        await store.create_agent(
            AgentRecord(
                agent_id=agent_id,
                run_id="run-1",
                parent_id=None,
                nickname=agent_id,
                role="worker",
                status="running",
                created_at=1,
                updated_at=1,
                base_instructions="be useful",
                config={},
                depth=0,
            )
        )


def started(call_id: str, agent_id: str = "a") -> LedgerEntry:
    return LedgerEntry(call_id=call_id, agent_id=agent_id, tool="t", arguments="{}", started_at=2)


@pytest.mark.anyio
async def test_a_batch_of_events_follows_the_last_seq_in_order(store: Store) -> None:
    await seed(store, "a", "b")
    await store.append_event("a", "user_input", {"n": 0}, at=1.0)
    await store.append_event("b", "user_input", {"n": 0}, at=1.0)
    batch = [("model_item", {"n": 1}), ("model_item", {"n": 2}), ("model_completed", {"n": 3})]

    added = await store.append_events("a", batch, at=2.0)

    assert [(e.seq, e.kind, e.payload["n"]) for e in added] == [
        (2, "model_item", 1),
        (3, "model_item", 2),
        (4, "model_completed", 3),
    ]
    run = await store.run_events("run-1")
    assert [e.run_seq for e in run] == [1, 2, 3, 4, 5], "one gap-free sequence per run"
    assert await store.events("a") == [e for e in run if e.agent_id == "a"]


@pytest.mark.anyio
async def test_a_batch_with_one_unstorable_event_adds_none_of_them(store: Store) -> None:
    await seed(store, "a")
    with pytest.raises(InvalidRecord, match="not storable as JSON"):
        await store.append_events("a", [("model_item", {}), ("x", {"bad": NAN})], at=2.0)
    with pytest.raises(UnknownAgent):
        await store.append_events("ghost", [("model_item", {})], at=2.0)
    assert await store.events("a") == []
    assert [e.seq for e in await store.append_events("a", [("x", {})], at=3.0)] == [1]


@pytest.mark.anyio
async def test_a_batch_can_update_its_agent_in_the_same_write(store: Store) -> None:
    await seed(store, "a")
    usage = {"input_tokens": 7, "output_tokens": 3}

    await store.append_events(
        "a", [("model_completed", {})], at=2.0, agent_update={"usage": usage, "cost_usd": 0.5}
    )

    agent = await store.get_agent("a")
    assert agent is not None and (agent.usage, agent.cost_usd) == (usage, 0.5)
    with pytest.raises(InvalidRecord):
        await store.append_events("a", [("x", {})], at=3.0, agent_update={"run_id": "other"})
    assert [e.kind for e in await store.events("a")] == ["model_completed"], "all or nothing"


@pytest.mark.anyio
async def test_a_finished_call_and_its_result_event_are_written_together(store: Store) -> None:
    await seed(store, "a")
    await store.append_event("a", "user_input", {}, at=1.0)
    await store.ledger_start(started("call-1"))

    event = await store.ledger_finish(
        "a", "call-1", output="ok", success=True, at=3.0, event=("tool_result", {"out": "ok"})
    )

    assert event is not None and (event.seq, event.kind, event.at) == (2, "tool_result", 3.0)
    [entry] = await store.ledger("a")
    assert (entry.state, entry.output) == ("finished", "ok")
    assert [e.kind for e in await store.events("a")] == ["user_input", "tool_result"]


@pytest.mark.anyio
async def test_a_result_event_that_cannot_be_stored_leaves_the_call_started(store: Store) -> None:
    await seed(store, "a")
    await store.ledger_start(started("call-1"))
    with pytest.raises(InvalidRecord, match="not storable as JSON"):
        await store.ledger_finish(
            "a", "call-1", output="ok", success=True, at=3.0, event=("tool_result", {"x": NAN})
        )
    with pytest.raises(UnknownCall):
        await store.ledger_finish(
            "a", "call-9", output="ok", success=True, at=3.0, event=("tool_result", {})
        )
    [entry] = await store.ledger("a")
    assert entry.state == "started"
    assert await store.events("a") == []


@pytest.mark.anyio
async def test_an_agent_update_changes_the_named_fields_and_keeps_the_rest(store: Store) -> None:
    await seed(store, "a")
    before = await store.get_agent("a")
    assert before is not None

    await store.append_events(
        "a", [("x", {})], at=2.0, agent_update={"usage": {"input_tokens": 4}, "updated_at": 2}
    )
    await store.update_agent("a", cost_usd=1, status="completed")

    after = await store.get_agent("a")
    expected = before.model_copy(
        update={"usage": {"input_tokens": 4}, "updated_at": 2.0, "cost_usd": 1.0}
    )
    assert after == expected.model_copy(update={"status": "completed"})
    assert isinstance(after.cost_usd, float), "values are stored as their field's type"
    with pytest.raises(UnknownAgent):
        await store.update_agent("nobody", cost_usd=1.0)
    with pytest.raises(UnknownAgent):
        await store.update_agent("nobody")


@pytest.mark.anyio
async def test_a_batch_can_start_tool_calls_in_the_same_write(store: Store) -> None:
    await seed(store, "a")
    await store.ledger_start(started("c0"))

    await store.append_events("a", [("model_item", {})], at=2.0, ledger_starts=[started("c1")])

    assert [(e.call_id, e.state) for e in await store.ledger("a")] == [
        ("c0", "started"),
        ("c1", "started"),
    ]
    with pytest.raises(DuplicateRecord):
        await store.append_events(
            "a", [("x", {})], at=3.0, ledger_starts=[started("c2"), started("c0")]
        )
    assert [e.kind for e in await store.events("a")] == ["model_item"], "all or nothing"
    assert [e.call_id for e in await store.ledger("a")] == ["c0", "c1"]
