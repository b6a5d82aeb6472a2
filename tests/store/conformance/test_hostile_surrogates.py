"""Lone surrogates from a model's JSON reach every text field of the journal, on every store.

`json.loads('"\\ud800"')` is a valid Python string that no UTF-8 database can hold. A model
controls tool arguments, tool outputs, its messages and what a batch item reports; a store that
raised `UnicodeEncodeError` on them would let a model crash its own run (and its resume).
"""

from __future__ import annotations

import json

import pytest

from corral.agents._store import (
    AgentRecord,
    ItemRecord,
    LeaseRecord,
    LedgerEntry,
    RunRecord,
    Store,
)

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

SURROGATES = {
    "high": json.loads('"\\ud800"'),
    "low-inside": json.loads('"before \\udfff after"'),
    "reversed-pair": json.loads('"\\udc00\\ud800"'),
    "with-nul": json.loads('"\\u0000\\udbff"'),
    "marked-lookalike": "\x01j" + json.loads('"\\ud800"'),
}


async def _run_with_agent(store: Store, text: str) -> str:
    run_id, agent_id = f"run-{text}", f"agent-{text}"
    await store.create_run(
        RunRecord(
            run_id=run_id, kind="exec", status="running", created_at=1, updated_at=1, config={}
        )
    )
    await store.create_agent(
        AgentRecord(
            agent_id=agent_id,
            run_id=run_id,
            parent_id=None,
            nickname=text,
            role="worker",
            status="running",
            created_at=1.0,
            updated_at=1.0,
            base_instructions=text,
            config={},
        )
    )
    return agent_id


@pytest.mark.parametrize("text", list(SURROGATES.values()), ids=list(SURROGATES))
async def test_tool_calls_outputs_and_messages_with_lone_surrogates_read_back_exactly(
    store: Store, text: str
) -> None:
    agent_id = await _run_with_agent(store, text)
    message = await store.append_event(agent_id, "message", {"text": text}, at=1.0)
    call = LedgerEntry(call_id=text, agent_id=agent_id, tool="shell", arguments=text, started_at=2)
    await store.ledger_start(call)
    result = await store.ledger_finish(
        agent_id, text, output=text, success=False, at=3.0, event=("tool_result", {"out": text})
    )
    batch = await store.append_events(agent_id, [(text, {text: text})], at=4.0)
    await store.update_agent(agent_id, final_message=text, error=text, status="completed")
    assert await store.events(agent_id) == [message, result, *batch]
    (entry,) = await store.ledger(agent_id)
    assert (entry.call_id, entry.arguments, entry.output) == (text, text, text)
    agent = await store.get_agent(agent_id)
    assert agent is not None and (agent.final_message, agent.error) == (text, text)
    assert agent.nickname == text and agent.base_instructions == text


@pytest.mark.parametrize("text", list(SURROGATES.values()), ids=list(SURROGATES))
async def test_batch_items_and_leases_with_lone_surrogates_read_back_exactly(
    store: Store, text: str
) -> None:
    agent_id = await _run_with_agent(store, text)
    run_id = f"run-{text}"
    item = ItemRecord(run_id=run_id, index=0, input={text: text})
    await store.put_items(run_id, [item])
    await store.update_item(
        run_id, 0, status="failed", agent_id=agent_id, result={"r": text}, error=text
    )
    (read,) = await store.items(run_id)
    assert (read.input, read.result, read.error, read.agent_id) == (
        {text: text},
        {"r": text},
        text,
        agent_id,
    )
    lease = LeaseRecord(
        run_id=run_id, holder=text, host=text, pid=1, since=5.0, heartbeat_at=5.0, timeout=1e9
    )
    await store.take_lease(lease)
    assert await store.renew_lease(run_id, text, at=6.0)
    (held,) = await store.leases(run_id)
    assert (held.holder, held.host, held.heartbeat_at) == (text, text, 6.0)
    assert [r.run_id for r in await store.list_runs(status="running")] == [run_id]
