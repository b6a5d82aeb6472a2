"""Resume decides per tool: an interrupted call without side effects runs again, one with side
effects is reported to the model as of unknown outcome. The crash is written into the journal
by hand: the call's model turn is journaled and its ledger entry started, nothing more."""

from __future__ import annotations

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
from corral.agents._events import Event, ModelCompleted, ModelItem
from corral.agents._outputs import LEDGER_ELIDED
from corral.agents.model import ScriptedModelClient
from corral.tools import PermissionProfile, Tool, ToolContext, ToolOutput, ToolRegistry
from tests._journal import seed_agent

from .test_runner import AGENT, NoArgs, first_input

pytestmark = pytest.mark.anyio
WAIT = 10.0


class Counted:
    """Two tools that count their runs: `look` reads only, `poke` changes the world."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def registry(self) -> ToolRegistry:
        async def look(args: NoArgs, ctx: ToolContext) -> ToolOutput:
            self.runs.append("look")
            return ToolOutput("looked: all fine")

        async def poke(args: NoArgs, ctx: ToolContext) -> ToolOutput:
            self.runs.append("poke")
            return ToolOutput("poked")

        return ToolRegistry(
            [
                Tool("look", "reads", NoArgs, look, side_effects=False),
                Tool("poke", "writes", NoArgs, poke),
            ]
        )


class Model:
    """Answers once the calls have outputs; records every request it got."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> list[Any]:
        self.requests.append(request)
        return [Message(role="assistant", text="done")]

    def outputs(self) -> dict[str, str]:
        items = self.requests[-1].input
        return {i.call_id: i.output for i in items if isinstance(i, FunctionCallOutput)}


def calls(*names: str) -> list[FunctionCall]:
    return [FunctionCall(call_id=f"c-{n}", name=n, arguments="{}") for n in names]


async def crashed_journal(store: MemoryStore, started: list[FunctionCall]) -> None:
    """The journal a process leaves when killed while `started` ran: turn journaled, ledger
    entries started, no results."""
    await seed_agent(store, AGENT)
    events: list[Event] = [first_input(), *(ModelItem(item=c) for c in started)]
    for event in [*events, ModelCompleted(usage=Usage())]:
        await store.append_event(AGENT, event.kind, event_to_payload(event), at=1.0)
    for c in started:
        await store.ledger_start(
            LedgerEntry(
                call_id=c.call_id, agent_id=AGENT, tool=c.name, arguments=c.arguments, started_at=1
            )
        )


async def resumed(store: MemoryStore, tools: Counted, model: Model) -> AgentStatus:
    registry = tools.registry()
    config = CoreConfig(
        agent_id=AGENT, model="m", instructions="i", tools=tuple(registry.responses_tools())
    )
    runner = AgentRunner(
        core=AgentCore(config),
        model=ScriptedModelClient(model),
        registry=registry,
        tool_context=ToolContext(cwd=Path("/w"), profile=PermissionProfile()),
        store=store,
    )
    runner.core = await replay_core(store, config)
    with anyio.fail_after(WAIT):
        finish = await continue_agent(runner)
    return finish.status


async def test_an_interrupted_call_without_side_effects_runs_again() -> None:
    store, tools, model = MemoryStore(), Counted(), Model()
    await crashed_journal(store, calls("look"))
    assert await resumed(store, tools, model) is AgentStatus.COMPLETED
    assert tools.runs == ["look"]
    assert model.outputs() == {"c-look": "looked: all fine"}
    [entry] = await store.ledger(AGENT)
    assert (entry.state, entry.output, entry.success) == ("finished", "looked: all fine", True)


async def test_an_interrupted_call_with_side_effects_is_reported_not_repeated() -> None:
    store, tools, model = MemoryStore(), Counted(), Model()
    await crashed_journal(store, calls("poke"))
    assert await resumed(store, tools, model) is AgentStatus.COMPLETED
    assert tools.runs == []
    told = model.outputs()["c-poke"]
    assert "<tool_call_interrupted>" in told and "unknown" in told


async def test_one_resume_repeats_the_reads_and_reports_the_writes_of_a_turn() -> None:
    store, tools, model = MemoryStore(), Counted(), Model()
    await crashed_journal(store, calls("poke", "look"))
    assert await resumed(store, tools, model) is AgentStatus.COMPLETED
    assert tools.runs == ["look"]
    outputs = model.outputs()
    assert outputs["c-look"] == "looked: all fine"
    assert "<tool_call_interrupted>" in outputs["c-poke"]
    assert len(model.requests) == 1


async def test_a_tool_this_process_does_not_offer_counts_as_side_effecting() -> None:
    store, tools, model = MemoryStore(), Counted(), Model()
    await crashed_journal(store, calls("gone"))
    assert await resumed(store, tools, model) is AgentStatus.COMPLETED
    assert "<tool_call_interrupted>" in model.outputs()["c-gone"]


@pytest.mark.parametrize(("name", "runs"), [("look", ["look"]), ("poke", [])])
async def test_a_large_output_lost_between_ledger_and_journal_is_never_guessed(
    name: str, runs: list[str]
) -> None:
    store, tools, model = MemoryStore(), Counted(), Model()
    await crashed_journal(store, calls(name))
    note = f"{LEDGER_ELIDED}9000000 bytes, sha256 00]"
    await store.ledger_finish(AGENT, f"c-{name}", output=note, success=True, at=2.0)
    assert await resumed(store, tools, model) is AgentStatus.COMPLETED
    assert tools.runs == runs
    told = model.outputs()[f"c-{name}"]
    if runs:
        assert told == "looked: all fine"
    else:
        assert "succeeded" in told and "lost" in told and LEDGER_ELIDED not in told


async def test_a_response_cut_off_by_a_kill_is_dropped_so_later_replays_agree() -> None:
    """Killed between a response's items and its completion: the journal has an item of a
    response that never completed. The resumed agent asks again; a later replay of the whole
    journal must not merge the dropped item with the new response."""
    store, tools = MemoryStore(), Counted()
    await seed_agent(store, AGENT)
    orphan = ModelItem(item=calls("poke")[0])
    for event in (first_input(), orphan):
        await store.append_event(AGENT, event.kind, event_to_payload(event), at=1.0)

    def model(request: ModelRequest) -> list[Any]:
        if any(isinstance(i, FunctionCallOutput) for i in request.input):
            return [Message(role="assistant", text="done")]
        return calls("look")

    registry = tools.registry()
    config = CoreConfig(
        agent_id=AGENT, model="m", instructions="i", tools=tuple(registry.responses_tools())
    )
    runner = AgentRunner(
        core=await replay_core(store, config),
        model=ScriptedModelClient(model),
        registry=registry,
        tool_context=ToolContext(cwd=Path("/w"), profile=PermissionProfile()),
        store=store,
    )
    with anyio.fail_after(WAIT):
        finish = await continue_agent(runner)
    assert finish.status is AgentStatus.COMPLETED
    assert tools.runs == ["look"], "the cut-off response's call never ran"
    kinds = [e.kind for e in await store.events(AGENT)]
    assert kinds[:4] == ["user_input", "model_item", "response_discarded", "model_item"]
    replayed = await replay_core(store, config)
    assert replayed.history == runner.core.history
    assert [i.name for i in replayed.history if isinstance(i, FunctionCall)] == ["look"]
