"""The anyio runner: journals before acting, cancels cleanly, calls hooks, enforces budgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from corral.agents import (
    AgentCore,
    AgentRunner,
    AgentStatus,
    CoreConfig,
    EnvironmentContext,
    FunctionCall,
    FunctionCallOutput,
    MemoryStore,
    Message,
    ModelPrice,
    ModelRequest,
    ModelResponse,
    RunnerHooks,
    RunnerLimits,
    TurnContext,
    Usage,
    UserInput,
    event_from_payload,
    replay_core,
)
from corral.agents.model import ScriptedModelClient
from corral.tools import PermissionProfile, Tool, ToolContext, ToolOutput, ToolRegistry
from tests._journal import seed_agent

pytestmark = pytest.mark.anyio
AGENT = "agent-r"


class NoArgs(BaseModel):
    pass


def tools_with(blocker: anyio.Event, started: anyio.Event) -> ToolRegistry:
    async def wait_forever(args: NoArgs, ctx: ToolContext) -> ToolOutput:
        started.set()
        await blocker.wait()
        return ToolOutput("never")

    async def quick(args: NoArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("quick result")

    return ToolRegistry(
        [
            Tool("block", "waits until released", NoArgs, wait_forever),
            Tool("quick", "answers at once", NoArgs, quick),
        ]
    )


def call(name: str, call_id: str) -> FunctionCall:
    return FunctionCall(call_id=call_id, name=name, arguments="{}")


def first_input() -> UserInput:
    env = EnvironmentContext(
        cwd=Path("/w"), shell="bash", current_date="2026-11-29", timezone="Etc/UTC"
    )
    return UserInput(
        text="task",
        context=TurnContext(
            environment=env, permissions="<permissions instructions>x</permissions instructions>"
        ),
    )


async def make_runner(
    respond: Any,
    registry: ToolRegistry,
    store: MemoryStore,
    *,
    hooks: RunnerHooks | None = None,
    limits: RunnerLimits | None = None,
    budgets: dict[str, Any] | None = None,
) -> AgentRunner:
    """A runner whose core keeps `budgets` (`CoreConfig` fields: limits and the price)."""
    await seed_agent(store, AGENT)
    config = CoreConfig(
        agent_id=AGENT,
        model="m",
        instructions="i",
        tools=tuple(registry.responses_tools()),
        **(budgets or {}),
    )
    return AgentRunner(
        core=AgentCore(config),
        model=ScriptedModelClient(respond),
        registry=registry,
        tool_context=ToolContext(cwd=Path("/w"), profile=PermissionProfile()),
        store=store,
        hooks=hooks or RunnerHooks(),
        limits=limits or RunnerLimits(),
    )


def calls_then_answer(request: ModelRequest) -> list[Any]:
    if any(isinstance(i, FunctionCallOutput) for i in request.input):
        return [Message(role="assistant", text="all done")]
    return [call("quick", "c1"), call("quick", "c2")]


async def test_every_event_is_journaled_and_replays_to_the_same_history() -> None:
    store = MemoryStore()
    runner = await make_runner(calls_then_answer, tools_with(anyio.Event(), anyio.Event()), store)
    finish = await runner.drive(await runner.feed(first_input()))
    assert finish.status is AgentStatus.COMPLETED and finish.message == "all done"
    kinds = [e.kind for e in await store.events(AGENT)]
    assert kinds == [
        "user_input",
        "model_item",
        "model_item",
        "model_completed",
        "tool_result",
        "tool_result",
        "model_item",
        "model_completed",
    ]
    replayed = await replay_core(store, runner.core.config)
    assert replayed.history == runner.core.history
    ledger = await store.ledger(AGENT)
    assert [(e.call_id, e.state) for e in ledger] == [("c1", "finished"), ("c2", "finished")]
    record = await store.get_agent(AGENT)
    assert record is not None and record.status == "completed"


async def test_a_cancelled_turn_records_its_in_flight_tool_as_aborted() -> None:
    store = MemoryStore()
    blocker, started = anyio.Event(), anyio.Event()

    def block(request: ModelRequest) -> list[Any]:
        return [call("quick", "c1"), call("block", "c2")]

    runner = await make_runner(block, tools_with(blocker, started), store)
    async with anyio.create_task_group() as tg:

        async def drive() -> None:
            await runner.drive(await runner.feed(first_input()))

        tg.start_soon(drive)
        with anyio.fail_after(10):
            await started.wait()
        tg.cancel_scope.cancel()
    events = [e for e in await store.events(AGENT)]
    assert events[-1].kind == "interrupt"
    outputs = [i for i in runner.core.history if isinstance(i, FunctionCallOutput)]
    assert [(o.call_id, o.success) for o in outputs] == [("c1", True), ("c2", False)]
    assert "aborted" in outputs[1].output
    replayed = await replay_core(store, runner.core.config)
    assert replayed.history == runner.core.history, "the journal stays consistent"
    assert replayed.status is AgentStatus.INTERRUPTED


class Recorder(RunnerHooks):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def model_call_started(self, agent_id: str, request: ModelRequest) -> None:
        self.seen.append("model+")

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None:
        self.seen.append("model-")

    def tool_call_started(self, agent_id: str, call: FunctionCall) -> None:
        self.seen.append(f"tool+{call.call_id}")
        raise RuntimeError("a broken hook must not stop the agent")

    def tool_call_ended(self, agent_id: str, call: FunctionCall, output: ToolOutput) -> None:
        self.seen.append(f"tool-{call.call_id}")


async def test_hooks_see_model_and_tool_calls_and_a_failing_hook_is_contained() -> None:
    hooks = Recorder()
    runner = await make_runner(
        calls_then_answer, tools_with(anyio.Event(), anyio.Event()), MemoryStore(), hooks=hooks
    )
    finish = await runner.drive(await runner.feed(first_input()))
    assert finish.status is AgentStatus.COMPLETED
    assert hooks.seen[:2] == ["model+", "model-"]
    assert sorted(hooks.seen[2:6]) == ["tool+c1", "tool+c2", "tool-c1", "tool-c2"]
    assert hooks.seen[6:] == ["model+", "model-"]


async def test_the_cost_budget_ends_the_agent_within_one_request() -> None:
    def expensive(request: ModelRequest) -> ModelResponse:
        return ModelResponse(
            items=[call("quick", f"c{len(request.input)}")], usage=Usage(input_tokens=1000)
        )

    budgets = {"max_cost_usd": 0.0025, "price": ModelPrice(input_per_mtok=1, output_per_mtok=0)}
    store = MemoryStore()
    runner = await make_runner(
        expensive, tools_with(anyio.Event(), anyio.Event()), store, budgets=budgets
    )
    finish = await runner.drive(await runner.feed(first_input()))
    assert finish.status is AgentStatus.BUDGET_EXCEEDED
    # Checked before the request: $0.002 spent and about $0.001 more would pass $0.0025.
    assert finish.error is not None and "cost budget would be exceeded" in finish.error
    assert runner.core.model_requests == 2
    record = await store.get_agent(AGENT)
    assert record is not None and record.status == "budget_exceeded"


async def test_the_wall_time_budget_ends_a_stuck_agent() -> None:
    blocker, started = anyio.Event(), anyio.Event()

    def block(request: ModelRequest) -> list[Any]:
        return [call("block", "c1")]

    runner = await make_runner(
        block,
        tools_with(blocker, started),
        MemoryStore(),
        budgets={"max_wall_time_s": 0.05},
    )
    with anyio.fail_after(10):
        finish = await runner.drive(await runner.feed(first_input()))
    assert finish.status is AgentStatus.BUDGET_EXCEEDED
    assert finish.error == "wall-time budget exceeded: 0.05 s"


async def test_journaled_events_are_plain_json() -> None:
    store = MemoryStore()
    runner = await make_runner(calls_then_answer, tools_with(anyio.Event(), anyio.Event()), store)
    await runner.drive(await runner.feed(first_input()))
    for record in await store.events(AGENT):
        assert event_from_payload(json.loads(json.dumps(record.payload))).kind == record.kind


async def test_a_tool_registered_mid_run_is_sent_from_the_next_request() -> None:
    store = MemoryStore()
    registry = tools_with(anyio.Event(), anyio.Event())
    seen: list[list[str]] = []

    async def late(args: NoArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("late")

    def respond(request: ModelRequest) -> list[Any]:
        seen.append([t["name"] for t in request.tools])
        if len(seen) == 1:
            registry.register(Tool("late", "registered while the agent works", NoArgs, late))
            return [call("quick", "c1")]
        return [Message(role="assistant", text="done")]

    runner = await make_runner(respond, registry, store)
    await runner.drive(await runner.feed(first_input()))
    assert seen == [["block", "quick"], ["block", "quick", "late"]]
    assert "tools_changed" in [e.kind for e in await store.events(AGENT)]
    replayed = await replay_core(store, runner.core.config)
    assert replayed.tools == runner.core.tools
