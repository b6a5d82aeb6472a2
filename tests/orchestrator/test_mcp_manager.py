"""The MCP manager against our own test server, run as a real process over stdio.

Covers both protocol eras, tool-list changes reaching registries and a running agent, a server
killed mid-run, servers that never start, and trace context in the request metadata.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import (
    AgentCore,
    AgentRunner,
    AgentStatus,
    CoreConfig,
    EnvironmentContext,
    FunctionCall,
    FunctionCallOutput,
    McpServerConfig,
    MemoryStore,
    Message,
    ModelRequest,
    TurnContext,
    UserInput,
)
from corral.agents.model import ScriptedModelClient
from corral.orchestrator.services.mcp import (
    McpStartupFailed,
    RestartPolicy,
    ServerState,
    open_mcp_manager,
)
from corral.tools import PermissionProfile, ToolCall, ToolContext, ToolOutput, ToolRegistry
from tests._journal import seed_agent

from .mcp_servers import dynamic_server

pytestmark = pytest.mark.anyio

WAIT = 30.0
"""Deadline for anything that waits on a real server process (they start in 1-3 s here)."""
FAST_RESTART = RestartPolicy(attempts=3, initial_delay_sec=0.05, max_delay_sec=0.5)
BUILT_IN = [
    "mcp__dyn__add_tool",
    "mcp__dyn__echo",
    "mcp__dyn__pid",
    "mcp__dyn__remove_tool",
    "mcp__dyn__trace",
]
MISSING_COMMAND = "corral-no-such-mcp-server"


def tool_context(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, profile=PermissionProfile())


async def dispatch(
    registry: ToolRegistry, name: str, args: dict[str, Any], tmp: Path
) -> ToolOutput:
    return await registry.dispatch(ToolCall("c", name, json.dumps(args)), tool_context(tmp))


@pytest.mark.parametrize(("mode", "era"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_a_tool_the_server_adds_is_in_an_attached_registry_when_the_call_returns(
    mode: Any, era: str, tmp_path: Path
) -> None:
    async with open_mcp_manager({"dyn": dynamic_server()}, mode=mode) as manager:
        assert manager.status("dyn").protocol_version == era
        registry = ToolRegistry()
        manager.attach(registry)
        assert registry.names == BUILT_IN
        version = manager.version
        added = await dispatch(registry, "mcp__dyn__add_tool", {"name": "late"}, tmp_path)
        assert added == ToolOutput("added late")
        assert registry.names == [*BUILT_IN, "mcp__dyn__late"]
        assert manager.version > version
        called = await dispatch(registry, "mcp__dyn__late", {}, tmp_path)
        assert called == ToolOutput("late says hello")


async def test_a_withdrawn_tool_stays_registered_and_says_it_is_no_longer_offered(
    tmp_path: Path,
) -> None:
    async with open_mcp_manager({"dyn": dynamic_server()}) as manager:
        registry = ToolRegistry()
        manager.sync_registry(registry)
        await manager.call("mcp__dyn__add_tool", {"name": "late"})
        # Whether a call returns after its notice is the other test's subject; here the list is
        # waited for, so a notice that comes after the answer on a loaded machine is no failure.
        with anyio.fail_after(30):
            await manager.wait_until(lambda: "mcp__dyn__late" in manager.status("dyn").tools)
        manager.sync_registry(registry)
        await manager.call("mcp__dyn__remove_tool", {"name": "late"})
        with anyio.fail_after(30):
            await manager.wait_until(lambda: "mcp__dyn__late" not in manager.status("dyn").tools)
        manager.sync_registry(registry)
        assert registry.names == [*BUILT_IN, "mcp__dyn__late"]
        assert "mcp__dyn__late" not in manager.status("dyn").tools
        gone = await dispatch(registry, "mcp__dyn__late", {}, tmp_path)
    assert gone == ToolOutput.error("tool mcp__dyn__late is no longer offered by MCP server 'dyn'")


async def test_enabled_and_disabled_tools_filter_by_the_servers_own_names() -> None:
    config = dynamic_server(enabled_tools=("echo", "pid", "add_tool"), disabled_tools=("pid",))
    async with open_mcp_manager({"dyn": config}) as manager:
        assert manager.status("dyn").tools == ("mcp__dyn__add_tool", "mcp__dyn__echo")
        await manager.call("mcp__dyn__add_tool", {"name": "late"})
        assert manager.status("dyn").tools == ("mcp__dyn__add_tool", "mcp__dyn__echo")
        assert [t.name for t in manager.tools] == ["mcp__dyn__add_tool", "mcp__dyn__echo"]
        assert all(t.mutating and not t.parallel for t in manager.tools)


def first_input() -> UserInput:
    env = EnvironmentContext(
        cwd=Path("/w"), shell="bash", current_date="2026-11-29", timezone="Etc/UTC"
    )
    return UserInput(text="use the tools", context=TurnContext(environment=env, permissions="p"))


async def make_runner(registry: ToolRegistry, respond: Any, tmp_path: Path) -> AgentRunner:
    store = MemoryStore()
    await seed_agent(store, "a")
    config = CoreConfig(
        agent_id="a", model="m", instructions="i", tools=tuple(registry.responses_tools())
    )
    return AgentRunner(
        core=AgentCore(config),
        model=ScriptedModelClient(respond),
        registry=registry,
        tool_context=tool_context(tmp_path),
        store=store,
    )


async def test_an_agent_calls_a_tool_the_server_added_as_soon_as_the_notice_arrives(
    tmp_path: Path,
) -> None:
    # On the 2026 protocol the change notice travels on the `subscriptions/listen` stream, not
    # with the call's answer, so it may land after the answer: the new tool is then offered one
    # request later. Until it is offered, the scripted model asks for the server's pid.
    offered: list[list[str]] = []

    def respond(request: ModelRequest) -> list[Any]:
        offered.append([tool["name"] for tool in request.tools])
        called = [i for i in request.input if isinstance(i, FunctionCall)]
        if len(offered) == 1:
            return [
                FunctionCall(call_id="c1", name="mcp__dyn__add_tool", arguments='{"name": "late"}')
            ]
        if any(call.name == "mcp__dyn__late" for call in called):
            return [Message(role="assistant", text="done")]
        if "mcp__dyn__late" in offered[-1]:
            return [FunctionCall(call_id="c2", name="mcp__dyn__late", arguments="{}")]
        return [FunctionCall(call_id=f"p{len(offered)}", name="mcp__dyn__pid", arguments="{}")]

    async with open_mcp_manager({"dyn": dynamic_server()}) as manager:
        registry = ToolRegistry()
        manager.attach(registry)
        runner = await make_runner(registry, respond, tmp_path)
        with anyio.fail_after(WAIT):
            finish = await runner.drive(await runner.feed(first_input()))
    assert finish.status is AgentStatus.COMPLETED
    assert offered[0] == BUILT_IN
    first_offer = next(n for n, names in enumerate(offered) if "mcp__dyn__late" in names)
    assert first_offer <= 2, "offered on the next request, or the one after if the notice lagged"
    assert offered[first_offer] == [*BUILT_IN, "mcp__dyn__late"]
    outputs = [i.output for i in runner.core.history if isinstance(i, FunctionCallOutput)]
    assert outputs[0] == "added late" and outputs[-1] == "late says hello"


async def test_a_killed_server_is_restarted_and_calls_meanwhile_get_a_clear_error() -> None:
    async with open_mcp_manager({"crashy": dynamic_server()}, restart=FAST_RESTART) as manager:
        tools_before = manager.status("crashy").tools
        first_pid = int((await manager.call("mcp__crashy__pid", {})).text)
        os.kill(first_pid, signal.SIGKILL)
        with anyio.fail_after(WAIT):
            await manager.wait_until(
                lambda: manager.status("crashy").state is ServerState.RESTARTING
            )
        during = await manager.call("mcp__crashy__pid", {})
        assert during == ToolOutput.error(
            "MCP server 'crashy' is restarting after it stopped (exit code -9); try again shortly"
        )
        with anyio.fail_after(WAIT):
            await manager.wait_until(lambda: manager.status("crashy").state is ServerState.READY)
        after = await manager.call("mcp__crashy__pid", {})
        assert after.success and int(after.text) != first_pid
        assert manager.status("crashy").tools == tools_before


async def test_a_server_that_never_starts_is_reported_failed_while_the_others_work() -> None:
    servers = {
        "good": dynamic_server(),
        "sleepy": McpServerConfig(command="sleep", args=("infinity",), startup_timeout_sec=1),
        "missing": McpServerConfig(command=MISSING_COMMAND),
    }
    async with open_mcp_manager(servers) as manager:
        status = {s.name: s for s in manager.statuses()}
        echoed = await manager.call("mcp__good__echo", {"text": "still here"})
    assert status["sleepy"].state is ServerState.FAILED
    assert status["sleepy"].error == "did not start within 1 s (startup_timeout_sec)"
    assert status["missing"].state is ServerState.FAILED
    assert status["missing"].error == (
        f"command '{MISSING_COMMAND}' was not found; check `command` (and PATH)"
    )
    assert status["good"].state is ServerState.READY
    assert echoed == ToolOutput("still here")


async def test_a_required_server_that_cannot_start_stops_the_startup() -> None:
    servers = {"must": McpServerConfig(command=MISSING_COMMAND, required=True)}
    with pytest.raises(McpStartupFailed) as caught:
        async with open_mcp_manager(servers):
            pytest.fail("the manager must not start without its required server")
    assert str(caught.value) == (
        f"required MCP server(s) did not start: 'must': command '{MISSING_COMMAND}' was not "
        "found; check `command` (and PATH). Fix the server or set `required = false` to run "
        "without it"
    )


async def test_the_callers_trace_context_reaches_the_server_in_the_request_meta() -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    carrier = {
        "traceparent": f"00-{trace_id}-00f067aa0ba902b7-01",
        "tracestate": "corral=1",
        "x-not-a-trace-key": "left out",
    }
    async with open_mcp_manager({"dyn": dynamic_server()}, trace_context=lambda: carrier) as m:
        seen = json.loads((await m.call("mcp__dyn__trace", {})).text)
    assert set(seen) == {"traceparent", "tracestate"}
    # With tracing on, the SDK's client span becomes the parent: same trace, its own span id.
    assert seen["traceparent"].split("-")[1] == trace_id
    assert seen["tracestate"] == "corral=1"
