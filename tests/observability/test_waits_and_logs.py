"""Log records carry the ids of the span they were emitted in; rate-limit and approval waits
become spans of their own (and a histogram point), recorded with the in-memory exporter."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from corral.agents import FunctionCall, ModelRequest, OtelConfig, RateLimit, RunnerHooks
from corral.observability import (
    RunMetrics,
    TracingHooks,
    WaitRecorder,
    open_observability,
    record_approval_wait,
    record_rate_limit_wait,
    recording_waits,
    trace_ids_on_logs,
)
from corral.orchestrator._ratelimit import ManualClock, RateLimiterRegistry
from corral.tools import (
    ApprovalDecision,
    ApprovalPolicy,
    PermissionProfile,
    RecordingSandbox,
    Tool,
    ToolCall,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    ToolServices,
    run_tool_calls,
    shell_tool,
)
from corral.tools._approval import CallbackApprover

pytestmark = pytest.mark.anyio
URL = "https://api.example.test/v1"
log = logging.getLogger("tests.observability.tool")


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def captured() -> Iterator[_Records]:
    handler = _Records()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def _hooks(exporter: InMemorySpanExporter, reader: InMemoryMetricReader | None = None) -> Any:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    metrics = RunMetrics(MeterProvider(metric_readers=[reader])) if reader is not None else None
    hooks = TracingHooks(provider, run_id="run-waits", metrics=metrics)
    return hooks, WaitRecorder(provider, hooks.root, metrics)


def _named(spans: tuple[ReadableSpan, ...], prefix: str) -> ReadableSpan:
    [span] = [s for s in spans if s.name.startswith(prefix)]
    return span


def _ids(record: logging.LogRecord) -> tuple[str, str] | None:
    """The trace and span ids on `record`, or None if no filter put them there."""
    ids = record.__dict__
    if "otel_trace_id" not in ids:
        return None
    return str(ids["otel_trace_id"]), str(ids["otel_span_id"])


class _NoArgs(BaseModel):
    pass


async def test_a_log_record_emitted_inside_a_tool_call_carries_that_tool_spans_ids(
    captured: _Records, exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    hooks, _ = _hooks(exporter)

    async def noisy(args: _NoArgs, ctx: ToolContext) -> ToolOutput:
        log.warning("working on it")
        return ToolOutput(text="done")

    registry = ToolRegistry([Tool("noisy", "logs a line", _NoArgs, noisy)])
    call = FunctionCall(call_id="call-1", name="noisy", arguments="{}")

    async def started(tool_call: ToolCall) -> None:
        hooks.tool_call_started("agent-1", call)

    async def ended(tool_call: ToolCall, output: ToolOutput) -> None:
        hooks.tool_call_ended("agent-1", call, output)

    ctx = ToolContext(cwd=tmp_path, profile=PermissionProfile.for_workspace("read-only", tmp_path))
    hooks.turn_started("agent-1", 1)
    with trace_ids_on_logs():
        log.warning("outside any span")
        await run_tool_calls(
            registry, [ToolCall("call-1", "noisy", "{}")], ctx, on_start=started, on_result=ended
        )
    log.warning("after the filter was removed")
    hooks.close()

    tool = _named(exporter.get_finished_spans(), "execute_tool noisy").context
    assert tool is not None
    outside, inside, after = captured.records
    assert _ids(outside) == ("", "")
    assert _ids(inside) == (
        trace.format_trace_id(tool.trace_id),
        trace.format_span_id(tool.span_id),
    )
    assert _ids(after) is None


async def test_open_observability_puts_ids_on_root_handlers_only_while_tracing(
    captured: _Records,
) -> None:
    env = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "console"}
    async with open_observability(OtelConfig(), env, run_id="r", hooks=RunnerHooks()):
        log.warning("metrics only")
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}
    async with open_observability(OtelConfig(), env, run_id="r", hooks=RunnerHooks()):
        log.warning("traced")
    log.warning("closed")
    metrics_only, traced, closed = captured.records
    assert _ids(metrics_only) is None
    assert _ids(traced) == ("", "")
    assert _ids(closed) is None


async def test_a_rate_limited_attempt_gets_a_wait_span_under_its_chat_and_a_histogram_point(
    exporter: InMemorySpanExporter,
) -> None:
    reader = InMemoryMetricReader()
    hooks, recorder = _hooks(exporter, reader)
    clock = ManualClock()
    limits = {"default": RateLimit(requests_per_minute=60)}
    registry = RateLimiterRegistry(limits, clock=clock, on_wait=record_rate_limit_wait)
    limiter = registry.limiter_for(URL)
    waited = anyio.Event()

    async def second_attempt() -> None:
        async with limiter.attempt(0):
            waited.set()

    with recording_waits(recorder):
        hooks.turn_started("agent-1", 1)
        request = ModelRequest(model="gpt-5", instructions="", input=[])
        hooks.model_call_started("agent-1", request)
        with anyio.fail_after(5):
            async with limiter.attempt(0), anyio.create_task_group() as group:
                group.start_soon(second_attempt)
                await anyio.wait_all_tasks_blocked()
                clock.advance(1.0)
                await waited.wait()
        hooks.model_call_ended("agent-1", request, None, RuntimeError("stop"))
    hooks.close()

    spans = exporter.get_finished_spans()
    wait = _named(spans, "corral.rate_limit.wait")
    chat = _named(spans, "chat gpt-5")
    assert wait.parent is not None and wait.parent.span_id == chat.context.span_id
    assert dict(wait.attributes or {})["corral.rate_limit.endpoint"] == URL
    assert dict(wait.attributes or {})["corral.wait.seconds"] == pytest.approx(1.0)
    assert (wait.end_time or 0) - (wait.start_time or 0) == pytest.approx(1e9)
    assert trace.get_current_span() is trace.INVALID_SPAN  # the chat span was detached
    data = reader.get_metrics_data()
    assert data is not None
    points = [
        point
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for metric in sm.metrics
        if metric.name == "corral.rate_limit.wait.duration"
        for point in metric.data.data_points
    ]
    assert [(p.count, p.sum, dict(p.attributes or {})) for p in points] == [  # type: ignore[union-attr]
        (1, pytest.approx(1.0), {"corral.rate_limit.endpoint": URL})
    ]


async def test_an_approval_asked_by_the_shell_tool_gets_a_wait_span_under_the_tool_span(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    hooks, recorder = _hooks(exporter)
    approver = CallbackApprover(lambda req: ApprovalDecision.deny("not today"))
    profile = PermissionProfile.for_workspace(
        "workspace-write", tmp_path, approval=ApprovalPolicy.ON_REQUEST
    )
    services = ToolServices(
        approver=approver,
        approval_observer=record_approval_wait,
        sandbox=RecordingSandbox(),  # a denied escalation never runs anything
    )
    ctx = ToolContext(cwd=tmp_path, profile=profile, services=services)
    arguments = json.dumps({"command": ["touch", "/x"], "escalate": True, "justification": "ok?"})
    call = FunctionCall(call_id="call-9", name="shell", arguments=arguments)

    async def started(tool_call: ToolCall) -> None:
        hooks.tool_call_started("agent-1", call)

    with recording_waits(recorder):
        hooks.turn_started("agent-1", 1)
        [output] = await run_tool_calls(
            ToolRegistry([shell_tool()]),
            [ToolCall("call-9", "shell", arguments)],
            ctx,
            on_start=started,
        )
    hooks.close()

    assert "approval was denied (not today)" in output.text
    spans = exporter.get_finished_spans()
    wait = _named(spans, "corral.approval.wait")
    tool = _named(spans, "execute_tool shell")
    assert wait.parent is not None and wait.parent.span_id == tool.context.span_id
    attributes = dict(wait.attributes or {})
    assert attributes["corral.approval.kind"] == "escalate"
    assert attributes["corral.approval.approved"] is False
