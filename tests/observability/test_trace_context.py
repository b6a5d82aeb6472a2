"""The trace context an MCP call made inside a tool call carries: that tool call's span."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from corral.agents import FunctionCall
from corral.observability import TracingHooks, current_trace_context
from corral.tools import ToolOutput

pytestmark = pytest.mark.anyio


async def test_each_tool_task_sees_the_traceparent_of_its_own_execute_tool_span() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    hooks = TracingHooks(provider, run_id="run-ctx")
    hooks.agent_started("agent-1", None, "root")
    hooks.turn_started("agent-1", 0)
    seen: dict[str, dict[str, str]] = {}
    started: set[str] = set()
    both_started = anyio.Event()

    async def run_tool(call_id: str) -> None:
        call = FunctionCall(call_id=call_id, name="mcp__time__now", arguments="{}")
        hooks.tool_call_started("agent-1", call)
        started.add(call_id)
        if len(started) == 2:
            both_started.set()
        with anyio.fail_after(5):
            await both_started.wait()  # both calls are open at once
        seen[call_id] = current_trace_context()
        hooks.tool_call_ended("agent-1", call, ToolOutput("12:00"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_tool, "c1")
        tg.start_soon(run_tool, "c2")
    hooks.close()
    assert current_trace_context() == {}
    spans = {
        s.attributes["gen_ai.tool.call.id"]: s
        for s in exporter.get_finished_spans()
        if s.attributes and "gen_ai.tool.call.id" in s.attributes
    }
    for call_id in ("c1", "c2"):
        context = spans[call_id].context
        assert context is not None
        flags = int(context.trace_flags)
        expected = f"00-{context.trace_id:032x}-{context.span_id:016x}-{flags:02x}"
        assert seen[call_id] == {"traceparent": expected}
