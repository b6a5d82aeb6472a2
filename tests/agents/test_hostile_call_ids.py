"""A model that repeats or omits call ids (some OpenAI-compatible servers answer `call_0` every
time) cannot stop an agent, merge two calls into one, or break its resume."""

from __future__ import annotations

from itertools import accumulate
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import (
    AgentCore,
    AgentRunner,
    AgentStatus,
    CoreConfig,
    FunctionCall,
    FunctionCallOutput,
    LedgerEntry,
    MemoryStore,
    Message,
    ModelRequest,
    Usage,
    continue_agent,
    event_to_payload,
    replay_core,
)
from corral.agents._events import Event, ModelCompleted, ModelItem, ToolResult
from corral.agents.model import ScriptedModelClient
from corral.tools import PermissionProfile, Tool, ToolContext, ToolOutput, ToolRegistry
from tests._journal import seed_agent

from .test_runner import AGENT, NoArgs, first_input

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]
WAIT = 10.0
TURNS = 3

ID_PATTERNS = {
    "the same id every turn": [["call_0"]] * TURNS,
    "the same id twice in one response": [["call_0", "call_0"]] * TURNS,
    "no id at all": [["", ""]] * TURNS,
    "ids that spell the rewritten ones": [["x", "x~2"], ["x", "x~2", "x~3"], ["x~2"]],
    "an empty id next to a real one": [["call~1", ""], ["", "call~1"], [""]],
}


class Counter:
    def __init__(self) -> None:
        self.runs = 0

    def registry(self) -> ToolRegistry:
        async def tick(args: NoArgs, ctx: ToolContext) -> ToolOutput:
            self.runs += 1
            return ToolOutput(f"tick {self.runs}")

        return ToolRegistry([Tool("tick", "counts", NoArgs, tick)])


def scripted(turns: list[list[str]]) -> Any:
    """Asks for `turns[n]` once the calls of the turns before it are answered, then ends."""
    ends = list(accumulate(map(len, turns)))

    def respond(request: ModelRequest) -> list[Any]:
        answered = sum(1 for i in request.input if isinstance(i, FunctionCallOutput))
        index = next((n for n, end in enumerate(ends) if answered < end), None)
        if index is None:
            return [Message(role="assistant", text="all done")]
        return [FunctionCall(call_id=c, name="tick", arguments="{}") for c in turns[index]]

    return respond


def runner_for(store: MemoryStore, counter: Counter, respond: Any) -> AgentRunner:
    registry = counter.registry()
    config = CoreConfig(
        agent_id=AGENT, model="m", instructions="i", tools=tuple(registry.responses_tools())
    )
    return AgentRunner(
        core=AgentCore(config),
        model=ScriptedModelClient(respond),
        registry=registry,
        tool_context=ToolContext(cwd=Path("/w"), profile=PermissionProfile()),
        store=store,
    )


@pytest.mark.parametrize("turns", list(ID_PATTERNS.values()), ids=list(ID_PATTERNS))
async def test_bad_call_ids_never_stop_the_agent_nor_merge_calls(turns: list[list[str]]) -> None:
    store, counter = MemoryStore(), Counter()
    await seed_agent(store, AGENT)
    runner = runner_for(store, counter, scripted(turns))
    with anyio.fail_after(WAIT):
        finish = await runner.drive(await runner.feed(first_input()))
    assert finish.status is AgentStatus.COMPLETED, finish.error
    calls = sum(map(len, turns))
    assert counter.runs == calls, "every call ran exactly once"
    ledger = await store.ledger(AGENT)
    assert len({e.call_id for e in ledger}) == calls
    journaled = [
        e.payload["item"]["call_id"]
        for e in await store.events(AGENT)
        if e.kind == "model_item" and e.payload["item"]["type"] == "function_call"
    ]
    assert sorted(journaled) == sorted(e.call_id for e in ledger), "the journal names the calls"
    replayed = await replay_core(store, runner.core.config)
    assert replayed.history == runner.core.history


async def test_a_journal_with_a_repeated_id_resumes_and_runs_the_second_call() -> None:
    """What an older corral left: `call_0` answered once, then asked again and never run."""
    store, counter = MemoryStore(), Counter()
    await seed_agent(store, AGENT)
    zero = FunctionCall(call_id="call_0", name="tick", arguments="{}")
    events: list[Event] = [
        first_input(),
        ModelItem(item=zero),
        ModelCompleted(usage=Usage()),
        ToolResult(call_id="call_0", output="tick 0"),
        ModelItem(item=zero),
        ModelCompleted(usage=Usage()),
    ]
    for event in events:
        await store.append_event(AGENT, event.kind, event_to_payload(event), at=1.0)
    await store.ledger_start(
        LedgerEntry(call_id="call_0", agent_id=AGENT, tool="tick", arguments="{}", started_at=1)
    )
    await store.ledger_finish(AGENT, "call_0", output="tick 0", success=True, at=1.0)
    seen: list[ModelRequest] = []

    def respond(request: ModelRequest) -> list[Any]:
        seen.append(request)
        return [Message(role="assistant", text="resumed")]

    runner = runner_for(store, counter, respond)
    runner.core = await replay_core(store, runner.core.config)
    with anyio.fail_after(WAIT):
        finish = await continue_agent(runner)
    assert finish.status is AgentStatus.COMPLETED, finish.error
    assert counter.runs == 1, "the second call ran; the first one's result was not reused"
    outputs = [(i.call_id, i.output) for i in seen[-1].input if isinstance(i, FunctionCallOutput)]
    assert outputs == [("call_0", "tick 0"), ("call_0~2", "tick 1")]
