"""`TracingHooks`: the runner's hooks turned into one OpenTelemetry trace per run.

A run has a root `invoke_workflow corral` span; each agent turn is an `invoke_agent {name}` span
under its anchor (the spawner's `execute_tool spawn_agent` span, a fan-out item's span, or the
root); model calls are `chat {model}` CLIENT spans and tool calls `execute_tool {tool}` spans
under the turn. Hooks are callbacks, so parents are passed explicitly, never taken from the
ambient context. No message or tool content goes on a span.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue

from corral.agents import (
    HOOK_NOTE,
    AgentStatus,
    FunctionCall,
    ModelRequest,
    ModelResponse,
    RunnerHooks,
    Usage,
    prompt_version,
)
from corral.tools import HookRun, ToolOutput

from . import _semconv as sc
from ._metrics import RunMetrics
from ._tool_extras import record_hook_span, record_tool_extras

CostFn = Callable[[str, Usage], float]
Redact = Callable[[str], str]
"""The USD cost of `usage` on the named model."""
SPAWN_TOOL = "spawn_agent"
_FAILED = frozenset({AgentStatus.FAILED, AgentStatus.BUDGET_EXCEEDED})
# The runner starts each tool call in the task that then runs it, so the span set here is the
# one an MCP call made by that tool should continue.
_TOOL_SPAN: ContextVar[Span | None] = ContextVar("corral_tool_span", default=None)


def current_trace_context() -> dict[str, str]:
    """W3C `traceparent` of the tool call running in this task ({} outside one), for MCP `_meta`."""
    span = _TOOL_SPAN.get()
    if span is None or not span.is_recording():
        return {}
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier, trace.set_span_in_context(span, Context()))
    return carrier


@dataclass
class _Turn:
    span: Span
    started: float
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    model_calls: int = 0
    tool_calls: int = 0


@dataclass
class _Agent:
    name: str
    parent_id: str | None
    depth: int
    anchor: Context
    item: Span | None = None
    turn: _Turn | None = None
    chat: tuple[Span, float] | None = None
    chat_token: Token[Context] | None = None
    tools: dict[str, tuple[Span, float]] = field(default_factory=dict)
    spawns: list[Span] = field(default_factory=list)
    compactions: list[Span] = field(default_factory=list)


class TracingHooks(RunnerHooks):
    """Records run `run_id` as one trace with `tracer_provider` (never the global provider)."""

    def __init__(
        self,
        tracer_provider: TracerProvider,
        *,
        run_id: str,
        cost_of: CostFn | None = None,
        metrics: RunMetrics | None = None,
        provider_name: str = sc.PROVIDER_OPENAI,
        content: Redact | None = None,
    ) -> None:
        """`content`, when given, puts message and tool content on spans through it."""
        self._tracer = tracer_provider.get_tracer(sc.INSTRUMENTATION_NAME)
        self._run_id = run_id
        self._cost_of = cost_of
        self._metrics = metrics
        self._provider = provider_name
        self._content = content
        self._agents: dict[str, _Agent] = {}
        self._closed = False
        self.root = self._tracer.start_span(
            f"{sc.OP_INVOKE_WORKFLOW} {sc.WORKFLOW_NAME}",
            context=Context(),
            kind=SpanKind.INTERNAL,
            attributes={
                sc.GEN_AI_OPERATION_NAME: sc.OP_INVOKE_WORKFLOW,
                sc.GEN_AI_WORKFLOW_NAME: sc.WORKFLOW_NAME,
                sc.CORRAL_RUN_ID: run_id,
            },
        )

    # -- agents and turns -------------------------------------------------------------------

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        parent = self._agents.get(parent_id) if parent_id else None
        agent = _Agent(
            name=name,
            parent_id=parent_id,
            depth=parent.depth + 1 if parent is not None else 0,
            anchor=self._in(self.root),
        )
        if parent is not None:
            agent.anchor = self._child_anchor(parent)
        elif (index := _item_index(name)) is not None:
            agent.item = self._tracer.start_span(
                f"{sc.SPAN_FANOUT_ITEM} {index}",
                context=agent.anchor,
                attributes={sc.CORRAL_RUN_ID: self._run_id, sc.CORRAL_ITEM_INDEX: index},
            )
            agent.anchor = self._in(agent.item)
        self._agents[agent_id] = agent

    def _child_anchor(self, parent: _Agent) -> Context:
        """The spawner's oldest open `spawn_agent` span, else its turn, else its own anchor."""
        if parent.spawns:
            return self._in(parent.spawns.pop(0))
        if parent.turn is not None:
            return self._in(parent.turn.span)
        return parent.anchor

    def turn_started(self, agent_id: str, turn: int) -> None:
        agent = self._agent(agent_id)
        if agent.turn is not None:
            self._end_turn(agent, AgentStatus.INTERRUPTED)
        attributes: dict[str, str | int] = {
            sc.GEN_AI_OPERATION_NAME: sc.OP_INVOKE_AGENT,
            sc.GEN_AI_PROVIDER_NAME: self._provider,
            sc.GEN_AI_AGENT_NAME: agent.name,
            sc.GEN_AI_AGENT_ID: agent_id,
            sc.GEN_AI_CONVERSATION_ID: agent_id,
            sc.CORRAL_RUN_ID: self._run_id,
            sc.CORRAL_DEPTH: agent.depth,
            sc.CORRAL_TURN: turn,
        }
        if agent.parent_id is not None:
            attributes[sc.CORRAL_PARENT_AGENT] = agent.parent_id
        span = self._tracer.start_span(
            f"{sc.OP_INVOKE_AGENT} {agent.name}",
            context=agent.anchor,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        agent.turn = _Turn(span=span, started=time.monotonic())

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None:
        agent = self._agent(agent_id)
        self._end_turn(agent, status)
        if agent.item is not None and status.is_final:
            agent.item.set_attribute(sc.CORRAL_STATUS, str(status))
            agent.item.end()
            agent.item = None

    def _end_turn(self, agent: _Agent, status: AgentStatus) -> None:
        turn = agent.turn
        if turn is None:
            return
        agent.turn = None
        span = turn.span
        span.set_attributes(
            {
                sc.CORRAL_STATUS: str(status),
                sc.CORRAL_TOTAL_INPUT_TOKENS: turn.usage.input_tokens,
                sc.CORRAL_TOTAL_OUTPUT_TOKENS: turn.usage.output_tokens,
                sc.CORRAL_TOTAL_CACHED_TOKENS: turn.usage.cached_input_tokens,
                sc.CORRAL_TOTAL_COST: turn.cost,
                sc.CORRAL_TOTAL_MODEL_CALLS: turn.model_calls,
                sc.CORRAL_TOTAL_TOOL_CALLS: turn.tool_calls,
            }
        )
        if status in _FAILED or status is AgentStatus.INTERRUPTED:
            span.set_attribute(sc.ERROR_TYPE, str(status))
        if status in _FAILED:
            span.set_status(Status(StatusCode.ERROR, f"agent ended {status}"))
        if self._metrics is not None:
            attributes = {sc.GEN_AI_AGENT_NAME: agent.name, sc.CORRAL_STATUS: str(status)}
            self._metrics.agent_turn(time.monotonic() - turn.started, attributes)
        span.end()

    # -- model calls ------------------------------------------------------------------------

    def model_call_started(self, agent_id: str, request: ModelRequest) -> None:
        agent = self._agent(agent_id)
        span = self._tracer.start_span(
            f"{sc.OP_CHAT} {request.model}",
            context=self._turn_context(agent),
            kind=SpanKind.CLIENT,
            attributes={
                sc.GEN_AI_OPERATION_NAME: sc.OP_CHAT,
                sc.GEN_AI_PROVIDER_NAME: self._provider,
                sc.GEN_AI_REQUEST_MODEL: request.model,
                sc.GEN_AI_CONVERSATION_ID: agent_id,
                sc.CORRAL_PROMPT_VERSION: prompt_version(request.instructions),
            },
        )
        if agent.turn is not None:  # the agent's span says which prompt it ran on too
            agent.turn.span.set_attribute(
                sc.CORRAL_PROMPT_VERSION, prompt_version(request.instructions)
            )
        if self._content is not None:
            messages = [item.to_wire() for item in request.input]
            span.set_attribute(sc.GEN_AI_SYSTEM_INSTRUCTIONS, self._content(request.instructions))
            span.set_attribute(sc.GEN_AI_INPUT_MESSAGES, self._content(json.dumps(messages)))
        agent.chat = (span, time.monotonic())
        # Current in the agent's task while the call lasts: rate-limit waits and logs find it.
        agent.chat_token = otel_context.attach(self._in(span))

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None:
        agent = self._agent(agent_id)
        if agent.chat is None:
            return
        span, started = agent.chat
        agent.chat = None
        token, agent.chat_token = agent.chat_token, None
        if token is not None and trace.get_current_span() is span:
            otel_context.detach(token)
        metric: dict[str, str | int | float | bool] = {
            sc.GEN_AI_OPERATION_NAME: sc.OP_CHAT,
            sc.GEN_AI_PROVIDER_NAME: self._provider,
            sc.GEN_AI_REQUEST_MODEL: request.model,
        }
        usage = Usage()
        if response is not None:
            usage = response.usage
            self._record_response(agent, span, request, response)
        if error is not None:
            metric[sc.ERROR_TYPE] = type(error).__name__
            span.set_attribute(sc.ERROR_TYPE, type(error).__name__)
            span.set_status(Status(StatusCode.ERROR, type(error).__name__))
        if self._metrics is not None:
            seconds = time.monotonic() - started
            self._metrics.model_call(seconds, usage.input_tokens, usage.output_tokens, metric)
        span.end()

    def _record_response(
        self, agent: _Agent, span: Span, request: ModelRequest, response: ModelResponse
    ) -> None:
        usage = response.usage
        cost = self._cost_of(request.model, usage) if self._cost_of is not None else 0.0
        span.set_attributes(chat_response_attributes(request.model, response, cost))
        if self._content is not None:
            output = json.dumps([item.to_wire() for item in response.items])
            span.set_attribute(sc.GEN_AI_OUTPUT_MESSAGES, self._content(output))
        if agent.turn is not None:
            agent.turn.usage = agent.turn.usage + usage
            agent.turn.cost += cost
            agent.turn.model_calls += 1
        if self._metrics is not None:
            self._metrics.cost(cost, {sc.GEN_AI_REQUEST_MODEL: request.model})

    # -- tools and compaction ---------------------------------------------------------------

    def tool_call_started(self, agent_id: str, call: FunctionCall) -> None:
        agent = self._agent(agent_id)
        span = self._tracer.start_span(
            f"{sc.OP_EXECUTE_TOOL} {call.name}",
            context=self._turn_context(agent),
            kind=SpanKind.INTERNAL,
            attributes={
                sc.GEN_AI_OPERATION_NAME: sc.OP_EXECUTE_TOOL,
                sc.GEN_AI_TOOL_NAME: call.name,
                sc.GEN_AI_TOOL_CALL_ID: call.call_id,
                sc.GEN_AI_TOOL_TYPE: "function",
            },
        )
        if self._content is not None:
            span.set_attribute(sc.GEN_AI_TOOL_CALL_ARGUMENTS, self._content(call.arguments))
        agent.tools[call.call_id] = (span, time.monotonic())
        _TOOL_SPAN.set(span)
        # The call's own task ends with it, so the span stays current there without a detach:
        # logs and waits inside the tool find it.
        otel_context.attach(self._in(span))
        if call.name == SPAWN_TOOL:
            agent.spawns.append(span)
        if agent.turn is not None:
            agent.turn.tool_calls += 1

    def tool_call_ended(self, agent_id: str, call: FunctionCall, output: ToolOutput) -> None:
        agent = self._agent(agent_id)
        entry = agent.tools.pop(call.call_id, None)
        if entry is None:
            return
        span, started = entry
        if span in agent.spawns:
            agent.spawns.remove(span)
        metric: dict[str, str | int | float | bool] = {sc.GEN_AI_TOOL_NAME: call.name}
        if self._content is not None:
            span.set_attribute(sc.GEN_AI_TOOL_CALL_RESULT, self._content(output.text))
        if not output.success:
            metric[sc.ERROR_TYPE] = sc.ERROR_TOOL
            span.set_attribute(sc.ERROR_TYPE, sc.ERROR_TOOL)
            span.set_status(Status(StatusCode.ERROR, f"tool {call.name} reported a failure"))
        record_tool_extras(self._tracer, span, output)
        if self._metrics is not None:
            self._metrics.tool_call(time.monotonic() - started, metric)
        span.end()

    def compaction_started(self, agent_id: str, dropped_items: int) -> None:
        agent = self._agent(agent_id)
        span = self._tracer.start_span(
            f"{sc.SPAN_COMPACTION} {agent.name}",
            context=self._turn_context(agent),
            attributes={sc.CORRAL_DROPPED_ITEMS: dropped_items, sc.CORRAL_RUN_ID: self._run_id},
        )
        agent.compactions.append(span)

    def compaction_ended(self, agent_id: str, error: str | None) -> None:
        agent = self._agent(agent_id)
        if not agent.compactions:
            return
        span = agent.compactions.pop(0)
        if error is not None:
            span.set_attribute(sc.ERROR_TYPE, "compaction_failed")
            span.set_status(Status(StatusCode.ERROR, "compaction failed"))
        span.end()

    # -- the end of the run -----------------------------------------------------------------

    def close(self) -> None:
        """End every span still open (interrupted work), then the run's root span."""
        if self._closed:
            return
        self._closed = True
        for agent in self._agents.values():
            for span, _ in agent.tools.values():
                span.set_attribute(sc.ERROR_TYPE, sc.ERROR_INTERRUPTED)
                span.end()
            agent.tools.clear()
            if agent.chat is not None:
                agent.chat[0].set_attribute(sc.ERROR_TYPE, sc.ERROR_INTERRUPTED)
                agent.chat[0].end()
                agent.chat = None
            for span in agent.compactions:
                span.end()
            self._end_turn(agent, AgentStatus.INTERRUPTED)
            if agent.item is not None:
                agent.item.end()
        self.root.end()

    # -- helpers ----------------------------------------------------------------------------

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        """A lifecycle hook's run (a `hook_ran` note) becomes a span in the agent's turn."""
        if kind == HOOK_NOTE:
            context = self._turn_context(self._agent(agent_id))
            record_hook_span(self._tracer, context, HookRun.model_validate(payload))

    def _agent(self, agent_id: str) -> _Agent:
        """The agent's record; one the runtime never announced hangs from the root."""
        agent = self._agents.get(agent_id)
        if agent is None:
            agent = _Agent(name=agent_id, parent_id=None, depth=0, anchor=self._in(self.root))
            self._agents[agent_id] = agent
        return agent

    def _turn_context(self, agent: _Agent) -> Context:
        return self._in(agent.turn.span) if agent.turn is not None else agent.anchor

    @staticmethod
    def _in(span: Span) -> Context:
        return trace.set_span_in_context(span, Context())


def _item_index(name: str) -> int | None:
    """The fan-out item a worker's nickname (`item 7`) names, or None."""
    prefix, _, number = name.partition(" ")
    return int(number) if prefix == "item" and number.isdigit() else None


def chat_response_attributes(
    model: str, response: ModelResponse, cost_usd: float
) -> dict[str, AttributeValue]:
    """What a `chat` span records of a response: model, usage, retries, cost and its id."""
    usage = response.usage
    attributes: dict[str, AttributeValue] = {
        sc.GEN_AI_RESPONSE_MODEL: response.model or model,
        sc.GEN_AI_USAGE_INPUT_TOKENS: usage.input_tokens,
        sc.GEN_AI_USAGE_OUTPUT_TOKENS: usage.output_tokens,
        sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: usage.cached_input_tokens,
        sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: usage.reasoning_tokens,
        sc.CORRAL_RETRIES: max(response.attempts - 1, 0),
        sc.CORRAL_COST: cost_usd,
    }
    if response.response_id:
        attributes[sc.GEN_AI_RESPONSE_ID] = response.response_id
    return attributes
