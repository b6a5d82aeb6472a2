"""The runner's compaction: background summaries beside the tools, manual compaction, and
journals that replay to the same compacted history."""

from __future__ import annotations

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
    ModelItem,
    ModelRequest,
    ModelResponse,
    ToolResult,
    TurnContext,
    Usage,
    UserInput,
    continue_agent,
    replay_core,
)
from corral.agents._events import ModelCompleted
from corral.agents._fragments import COMPACTION_SUMMARY, SUMMARIZATION_PROMPT
from corral.agents.model import ModelError, ScriptedModelClient
from corral.tools import PermissionProfile, Tool, ToolContext, ToolOutput, ToolRegistry
from tests._journal import seed_agent

pytestmark = pytest.mark.anyio
AGENT = "agent-c"
WAIT = 10.0


class NoArgs(BaseModel):
    pass


def is_summary_request(request: ModelRequest) -> bool:
    return request.input[-1] == Message(role="user", text=SUMMARIZATION_PROMPT)


def call(call_id: str) -> FunctionCall:
    return FunctionCall(call_id=call_id, name="work", arguments="{}")


def reply(*items: Any, tokens: int = 100) -> ModelResponse:
    return ModelResponse(items=list(items), usage=Usage(input_tokens=tokens, output_tokens=10))


def first_input(text: str = "the task") -> UserInput:
    env = EnvironmentContext(
        cwd=Path("/w"), shell="bash", current_date="2026-11-29", timezone="Etc/UTC"
    )
    perms = "<permissions instructions>x</permissions instructions>"
    return UserInput(text=text, context=TurnContext(environment=env, permissions=perms))


async def make_runner(
    store: MemoryStore, model: ScriptedModelClient, registry: ToolRegistry, core: AgentCore
) -> AgentRunner:
    if await store.get_agent(AGENT) is None:
        await seed_agent(store, AGENT)
    return AgentRunner(
        core=core,
        model=model,
        registry=registry,
        tool_context=ToolContext(cwd=Path("/w"), profile=PermissionProfile()),
        store=store,
    )


def config(window: int = 1000) -> CoreConfig:
    return CoreConfig(agent_id=AGENT, model="m", instructions="i", context_window=window)


def work_tool(started: anyio.Event, release: anyio.Event | None) -> ToolRegistry:
    async def work(args: NoArgs, ctx: ToolContext) -> ToolOutput:
        started.set()
        if release is not None:
            with anyio.fail_after(WAIT):
                await release.wait()
        return ToolOutput("worked")

    return ToolRegistry([Tool("work", "does the work", NoArgs, work)])


async def test_a_summary_made_while_tools_run_replaces_the_past_without_a_stall() -> None:
    tool_started, summary_started = anyio.Event(), anyio.Event()

    async def respond(request: ModelRequest) -> ModelResponse:
        if is_summary_request(request):
            summary_started.set()
            with anyio.fail_after(WAIT):  # only possible if the tool runs meanwhile
                await tool_started.wait()
            return reply(Message(role="assistant", text="SUMMARY: task read"))
        if any(isinstance(i, FunctionCallOutput) for i in request.input):
            return reply(Message(role="assistant", text="finished"))
        return reply(call("w1"), tokens=850)

    store, model = MemoryStore(), ScriptedModelClient(respond)
    registry = work_tool(tool_started, release=summary_started)
    runner = await make_runner(store, model, registry, AgentCore(config()))
    finish = await runner.drive(await runner.feed(first_input()))

    assert finish.status is AgentStatus.COMPLETED and finish.message == "finished"
    first, summary, last = model.requests
    assert list(summary.input[:-1]) == list(first.input), "the past, without the open call"
    texts = [i.text for i in last.input if isinstance(i, Message)]
    assert COMPACTION_SUMMARY.matches(texts[-1]) and "SUMMARY: task read" in texts[-1]
    assert list(last.input[-2:]) == [call("w1"), FunctionCallOutput(call_id="w1", output="worked")]
    kinds = [e.kind for e in await store.events(AGENT)]
    assert "compaction_prepared" in kinds
    replayed = await replay_core(store, runner.core.config)
    assert replayed.history == runner.core.history and replayed.compactions == 1


async def test_manual_compaction_of_an_idle_agent_is_journaled_and_replays() -> None:
    def respond(request: ModelRequest) -> ModelResponse:
        if is_summary_request(request):
            return reply(Message(role="assistant", text="handoff note"))
        if any(isinstance(i, FunctionCallOutput) for i in request.input):
            return reply(Message(role="assistant", text="finished"))
        return reply(call("w1"))

    store, model = MemoryStore(), ScriptedModelClient(respond)
    registry = work_tool(anyio.Event(), release=None)
    runner = await make_runner(store, model, registry, AgentCore(config(272_000)))
    await runner.drive(await runner.feed(first_input()))

    dropped = await runner.compact_now()
    assert dropped is not None and dropped.call_ids == ("w1",)
    history = runner.core.history
    assert history[2] == Message(role="user", text="the task")
    assert isinstance(history[-1], Message) and "handoff note" in history[-1].text
    assert await runner.compact_now() is None, "nothing new to compact"
    events = await store.events(AGENT)
    kinds = [e.kind for e in events]
    assert kinds[-3:] == ["compact_requested", "compaction_done", "compact_requested"]
    assert events[-2].payload["dropped"]["call_ids"] == ["w1"]
    replayed = await replay_core(store, runner.core.config)
    assert replayed.history == history and replayed.status is AgentStatus.COMPLETED


async def test_a_failed_manual_compaction_raises_and_keeps_the_history() -> None:
    def respond(request: ModelRequest) -> ModelResponse:
        if is_summary_request(request):
            raise ModelError("HTTP 503 from the model endpoint")
        return reply(Message(role="assistant", text="finished"))

    store, model = MemoryStore(), ScriptedModelClient(respond)
    runner = await make_runner(
        store, model, work_tool(anyio.Event(), None), AgentCore(config(272_000))
    )
    await runner.drive(await runner.feed(first_input()))
    before = list(runner.core.history)
    with pytest.raises(ModelError, match="HTTP 503"):
        await runner.compact_now()
    assert runner.core.history == before
    replayed = await replay_core(store, runner.core.config)
    assert replayed.history == before


async def test_a_resumed_agent_whose_summary_was_lost_compacts_in_the_foreground() -> None:
    store = MemoryStore()
    dead = await make_runner(
        store, ScriptedModelClient(lambda r: "unused"), ToolRegistry([]), AgentCore(config())
    )
    await dead.feed(first_input())
    await dead.feed(ModelItem(item=call("w1")))
    await dead.feed(ModelCompleted(usage=Usage(input_tokens=850)))
    await dead.feed(ToolResult(call_id="w1", output="x" * 400))
    assert dead.core.waiting_for == "compaction", "the process died awaiting its summary"

    def respond(request: ModelRequest) -> ModelResponse:
        if is_summary_request(request):
            return reply(Message(role="assistant", text="fresh summary"))
        return reply(Message(role="assistant", text="finished"))

    model = ScriptedModelClient(respond)
    core = await replay_core(store, config())
    runner = await make_runner(store, model, work_tool(anyio.Event(), None), core)
    finish = await continue_agent(runner)
    assert finish.status is AgentStatus.COMPLETED
    summary_request = model.requests[0]
    assert summary_request.input[-2] == FunctionCallOutput(call_id="w1", output="x" * 400)
    kinds = [e.kind for e in await store.events(AGENT)]
    expected = ["compaction_prepared", "compaction_done", "model_item", "model_completed"]
    assert kinds[-4:] == expected
    replayed = await replay_core(store, config())
    assert replayed.history == runner.core.history
