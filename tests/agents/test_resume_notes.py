"""Notes in an agent's journal (approval requests and answers) are not inputs of its core."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import (
    NOTE_KINDS,
    AgentRunner,
    AgentStatus,
    FunctionCallOutput,
    MemoryStore,
    Message,
    ModelRequest,
    continue_agent,
    replay_core,
)
from corral.agents.model import ScriptedModelClient
from corral.tools import PermissionProfile, Tool, ToolContext, ToolOutput, ToolRegistry

from .test_runner import AGENT, NoArgs, call, first_input, make_runner

pytestmark = pytest.mark.anyio
WAIT = 10.0


def asks_then_answers(request: ModelRequest) -> list[Any]:
    if any(isinstance(i, FunctionCallOutput) for i in request.input):
        return [Message(role="assistant", text="done after the approval")]
    return [call("ask", "c1")]


def asking_tool(store: MemoryStore, asked: anyio.Event) -> ToolRegistry:
    """A tool that journals an approval request, waits forever, and journals the expiry."""

    async def ask(args: NoArgs, ctx: ToolContext) -> ToolOutput:
        payload = {"approval_id": "apr_1", "command": "make deploy"}
        await store.append_event(AGENT, "approval_requested", payload, at=1.0)
        asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                answer = {"approval_id": "apr_1", "decision": "deny", "who": "cancel"}
                await store.append_event(AGENT, "approval_answered", answer, at=2.0)
        return ToolOutput("never")

    return ToolRegistry([Tool("ask", "asks for approval", NoArgs, ask)])


async def test_an_agent_with_approval_notes_in_its_journal_replays_and_resumes() -> None:
    store, asked = MemoryStore(), anyio.Event()
    registry = asking_tool(store, asked)
    runner = await make_runner(asks_then_answers, registry, store)
    async with anyio.create_task_group() as tg:

        async def drive() -> None:
            await runner.drive(await runner.feed(first_input()))

        tg.start_soon(drive)
        with anyio.fail_after(WAIT):
            await asked.wait()
        tg.cancel_scope.cancel()
    kinds = [e.kind for e in await store.events(AGENT)]
    replayed = await replay_core(store, runner.core.config)
    history, status = list(replayed.history), replayed.status
    resumed = AgentRunner(
        core=replayed,
        model=ScriptedModelClient(asks_then_answers),
        registry=registry,
        tool_context=ToolContext(cwd=Path("/w"), profile=PermissionProfile()),
        store=store,
    )
    with anyio.fail_after(WAIT):
        finish = await continue_agent(resumed)
    assert [k for k in kinds if k in NOTE_KINDS] == ["approval_requested", "approval_answered"]
    assert history == runner.core.history
    assert status is AgentStatus.INTERRUPTED
    assert finish.status is AgentStatus.COMPLETED
    assert finish.message == "done after the approval"
