"""The ledger's checks answer the same in every store, whichever write finds the problem: an
unknown call, a call finished already, an outcome that cannot be stored, a start repeated in one
batch or naming another agent."""

from __future__ import annotations

from typing import Any

import pytest

from corral.agents._store import DuplicateRecord, InvalidRecord, Store, UnknownAgent, UnknownCall

from .test_store_batches import seed, started

BAD_OUTPUT: Any = 123
"""Not text: no store may record it as a call's output."""


@pytest.mark.anyio
async def test_an_outcome_that_cannot_be_stored_leaves_the_call_started(store: Store) -> None:
    await seed(store, "a")
    await store.ledger_start(started("c1"))

    with pytest.raises(InvalidRecord, match="invalid LedgerEntry update"):
        await store.ledger_finish("a", "c1", output=BAD_OUTPUT, success=True, at=3.0)

    [entry] = await store.ledger("a")
    assert (entry.state, entry.output, entry.finished_at) == ("started", None, None)


@pytest.mark.anyio
async def test_a_bad_outcome_for_an_unknown_or_finished_call_says_what_is_wrong_with_the_call(
    store: Store,
) -> None:
    await seed(store, "a")
    await store.ledger_start(started("c1"))
    await store.ledger_finish("a", "c1", output="done", success=True, at=3.0)

    with pytest.raises(UnknownCall):
        await store.ledger_finish("a", "c-x", output=BAD_OUTPUT, success=True, at=4.0)
    with pytest.raises(DuplicateRecord, match="already finished"):
        await store.ledger_finish("a", "c1", output=BAD_OUTPUT, success=True, at=4.0)
    [entry] = await store.ledger("a")
    assert (entry.output, entry.finished_at) == ("done", 3.0)


@pytest.mark.anyio
async def test_a_batch_that_starts_one_call_twice_writes_nothing(store: Store) -> None:
    await seed(store, "a")

    with pytest.raises(DuplicateRecord, match="agent 'a' tool call 'c1' already exists"):
        await store.append_events(
            "a", [("x", {})], at=2.0, ledger_starts=[started("c1"), started("c1")]
        )

    assert await store.events("a") == []
    assert await store.ledger("a") == []


@pytest.mark.anyio
async def test_a_batch_may_start_a_call_of_another_agent_only_if_that_agent_exists(
    store: Store,
) -> None:
    await seed(store, "a", "b")

    with pytest.raises(UnknownAgent):
        await store.append_events("a", [("x", {})], at=2.0, ledger_starts=[started("c1", "nobody")])
    assert await store.events("a") == []

    await store.append_events("a", [("x", {})], at=2.0, ledger_starts=[started("c1", "b")])
    assert [(e.agent_id, e.call_id) for e in await store.ledger("b")] == [("b", "c1")]
    assert await store.ledger("a") == []
