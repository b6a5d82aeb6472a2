"""Traces that continue across Temporal: one trace per run, from the starter to every activity.

`CorralTracingInterceptor` is Temporal's `TracingInterceptor` (it carries the trace context in
workflow, child-workflow and activity headers) that also hands its tracer to the activities,
where `chat_span` and `ToolSpans` record the `chat {model}` and `execute_tool {tool}` spans a
local run records, under the activity's `RunActivity:` span. `run_span` is the starter's root
`invoke_workflow corral` span. Providers are passed in, never taken from the global one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NoOpTracer, Span, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace import TracerProvider as TracerProviderApi
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput

from corral.agents import ModelRequest, ModelResponse, prompt_version
from corral.observability import _semconv as sc
from corral.observability import chat_response_attributes, record_tool_extras
from corral.tools import ToolCall, ToolOutput

_ACTIVITY_TRACER: ContextVar[Tracer | None] = ContextVar("corral_activity_tracer", default=None)


class CorralTracingInterceptor(TracingInterceptor):
    """Temporal's tracing interceptor on `tracer_provider`, whose activities record corral's
    GenAI spans too. Set it on the client: workers built on that client use it as well."""

    def __init__(self, tracer_provider: TracerProviderApi) -> None:
        super().__init__(tracer_provider.get_tracer(sc.INSTRUMENTATION_NAME))

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return super().intercept_activity(_HandTracer(next, self.tracer))


class _HandTracer(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, tracer: Tracer) -> None:
        super().__init__(next)
        self._tracer = tracer

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        token = _ACTIVITY_TRACER.set(self._tracer)
        try:
            return await super().execute_activity(input)
        finally:
            _ACTIVITY_TRACER.reset(token)


def _tracer() -> Tracer:
    return _ACTIVITY_TRACER.get() or NoOpTracer()


@contextmanager
def run_span(tracer_provider: TracerProviderApi, run_id: str) -> Iterator[Span]:
    """The run's root span, current for the block: workflows started in it hang below."""
    tracer = tracer_provider.get_tracer(sc.INSTRUMENTATION_NAME)
    attributes = {
        sc.GEN_AI_OPERATION_NAME: sc.OP_INVOKE_WORKFLOW,
        sc.GEN_AI_WORKFLOW_NAME: sc.WORKFLOW_NAME,
        sc.CORRAL_RUN_ID: run_id,
    }
    name = f"{sc.OP_INVOKE_WORKFLOW} {sc.WORKFLOW_NAME}"
    with tracer.start_as_current_span(name, kind=SpanKind.INTERNAL, attributes=attributes) as root:
        yield root


@dataclass
class ChatSpan:
    """One model call's `chat {model}` span; `succeeded` or `failed` says how it ended."""

    span: Span
    model: str

    def succeeded(self, response: ModelResponse, cost_usd: float) -> None:
        self.span.set_attributes(chat_response_attributes(self.model, response, cost_usd))

    def failed(self, error: BaseException) -> None:
        self.span.set_attribute(sc.ERROR_TYPE, type(error).__name__)
        self.span.set_status(Status(StatusCode.ERROR, type(error).__name__))


@contextmanager
def chat_span(agent_id: str, request: ModelRequest) -> Iterator[ChatSpan]:
    """A `chat {model}` CLIENT span under the running activity's span."""
    attributes = {
        sc.GEN_AI_OPERATION_NAME: sc.OP_CHAT,
        sc.GEN_AI_PROVIDER_NAME: sc.PROVIDER_OPENAI,
        sc.GEN_AI_REQUEST_MODEL: request.model,
        sc.GEN_AI_CONVERSATION_ID: agent_id,
        sc.CORRAL_PROMPT_VERSION: prompt_version(request.instructions),
    }
    with _tracer().start_as_current_span(
        f"{sc.OP_CHAT} {request.model}", kind=SpanKind.CLIENT, attributes=attributes
    ) as span:
        yield ChatSpan(span, request.model)


@dataclass
class ToolSpans:
    """The `execute_tool {tool}` spans of one tool batch, under the activity's span."""

    parent: otel_context.Context = field(default_factory=otel_context.get_current)
    open: dict[str, Span] = field(default_factory=dict)

    def start(self, call: ToolCall) -> None:
        """Called in the task that runs `call`: its span stays current there (that task ends
        with the call), so an MCP call the tool makes continues it."""
        span = _tracer().start_span(
            f"{sc.OP_EXECUTE_TOOL} {call.name}",
            context=self.parent,
            kind=SpanKind.INTERNAL,
            attributes={
                sc.GEN_AI_OPERATION_NAME: sc.OP_EXECUTE_TOOL,
                sc.GEN_AI_TOOL_NAME: call.name,
                sc.GEN_AI_TOOL_CALL_ID: call.call_id,
                sc.GEN_AI_TOOL_TYPE: "function",
            },
        )
        self.open[call.call_id] = span
        otel_context.attach(trace.set_span_in_context(span, self.parent))

    def end(self, call: ToolCall, output: ToolOutput) -> None:
        span = self.open.pop(call.call_id, None)
        if span is None:
            return
        if not output.success:
            span.set_attribute(sc.ERROR_TYPE, sc.ERROR_TOOL)
            span.set_status(Status(StatusCode.ERROR, f"tool {call.name} reported a failure"))
        record_tool_extras(_tracer(), span, output)
        span.end()

    def close(self) -> None:
        """End the spans of calls that never ended (the activity was cancelled)."""
        for span in self.open.values():
            span.set_attribute(sc.ERROR_TYPE, sc.ERROR_INTERRUPTED)
            span.end()
        self.open.clear()
