"""An agent and its first events in one write: what `create_agent(..., events=...)` promises."""

from __future__ import annotations

import pytest

from corral.agents._store import DuplicateRecord, InvalidRecord, Store, UnknownAgent

from .test_store import make_agent, seed


@pytest.mark.anyio
async def test_an_agents_first_events_are_numbered_after_the_runs_last(store: Store) -> None:
    await seed(store, "a")
    await store.append_event("a", "user_input", {"text": "hi"}, at=1.0)
    agent = make_agent("b")

    added = await store.create_agent(agent, events=[("agent_started", {"n": 1}), ("x", {})])

    assert [(e.seq, e.run_seq, e.kind, e.at) for e in added] == [
        (1, 2, "agent_started", agent.created_at),
        (2, 3, "x", agent.created_at),
    ]
    assert await store.events("b") == added
    assert await store.get_agent("b") == agent


@pytest.mark.anyio
async def test_an_agent_without_events_answers_none_and_has_an_empty_journal(
    store: Store,
) -> None:
    await seed(store)
    assert await store.create_agent(make_agent("a")) == []
    assert await store.events("a") == []


@pytest.mark.anyio
@pytest.mark.parametrize("bad", [float("nan"), object()])
async def test_an_agent_whose_first_event_is_refused_is_not_created(
    store: Store, bad: object
) -> None:
    await seed(store)
    with pytest.raises(InvalidRecord, match="not storable as JSON"):
        await store.create_agent(make_agent("a"), events=[("ok", {}), ("x", {"bad": bad})])
    assert await store.get_agent("a") is None
    with pytest.raises(UnknownAgent):
        await store.events("a")
    assert await store.run_events("run-1") == []


@pytest.mark.anyio
async def test_a_taken_agent_id_adds_no_events_to_the_agent_holding_it(store: Store) -> None:
    await seed(store, "a")
    with pytest.raises(DuplicateRecord, match="agent 'a' already exists"):
        await store.create_agent(make_agent("a"), events=[("agent_started", {})])
    assert await store.events("a") == []
