"""What a tool span shows of the network policy and the user's hooks, and a lifecycle hook's
span: recorded in memory from the tracing hooks directly."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from corral.agents import HOOK_NOTE, FunctionCall
from corral.observability import TracingHooks
from corral.tools import HookEvent, HookRun, ToolOutput


@pytest.fixture(autouse=True)
def own_context() -> Iterator[None]:
    """A tool call's span stays current in the task that ran it; here that task is the test's
    own, so the span is taken back off before the next test."""
    token = otel_context.attach(otel_context.Context())
    yield
    otel_context.detach(token)


def traced() -> tuple[TracingHooks, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return TracingHooks(provider, run_id="run-1"), exporter


def hook_run(event: HookEvent, decision: str, exit_code: int | None = 0) -> HookRun:
    return HookRun.model_validate(
        {
            "event": event,
            "command": "check.sh",
            "exit_code": exit_code,
            "started_at": 1_000.0,
            "duration": 0.25,
            "decision": decision,
            "reason": "why",
        }
    )


def test_a_tool_span_counts_refused_connections_and_holds_its_hooks_as_children() -> None:
    hooks, exporter = traced()
    call = FunctionCall(call_id="c1", name="shell", arguments="{}")
    hooks.agent_started("agent-1", None, "root")
    hooks.tool_call_started("agent-1", call)
    output = ToolOutput(
        text="...",
        network_denials=("evil.test: it is not in allowed_domains",),
        hook_runs=(hook_run(HookEvent.PRE_TOOL_USE, "observe"),),
    )
    hooks.tool_call_ended("agent-1", call, output)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    tool, hook = spans["execute_tool shell"], spans["hook PreToolUse"]
    assert tool.attributes is not None and hook.attributes is not None
    assert tool.attributes["corral.network.denied_count"] == 1
    assert tool.attributes["corral.network.denied"] == ("evil.test: it is not in allowed_domains",)
    assert hook.parent is not None and hook.parent.span_id == tool.context.span_id
    assert hook.attributes["corral.hook.decision"] == "observe"
    assert hook.end_time is not None and hook.start_time is not None
    assert hook.end_time - hook.start_time == 250_000_000


def test_a_lifecycle_hook_note_becomes_a_span_marked_failed_when_it_failed() -> None:
    hooks, exporter = traced()
    hooks.agent_started("agent-1", None, "root")
    payload = hook_run(HookEvent.STOP, "timeout", None).model_dump(mode="json")
    hooks.event("agent-1", 7, HOOK_NOTE, payload)
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "hook Stop"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None and span.attributes["corral.hook.exit_code"] == -1
