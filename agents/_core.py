"""`AgentCore`: one agent as a pure state machine.

It is fed events and answers actions; it does no I/O, reads no clock and starts no task, so the
local runner, the Temporal executor and the unit tests drive the very same object. History is
append-only between compactions, which is what keeps request n+1 a byte-exact extension of
request n. Context fragments are rendered elsewhere; the core decides when to send them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tools._truncate import truncate_middle

from ._compaction import build_compaction_request, rebuild_after_compaction
from ._context import ContextTracker
from ._errors import CoreStateError
from ._events import (
    Action,
    AgentStatus,
    BudgetExceeded,
    CallModel,
    Compact,
    CompactionDone,
    CompactionFailed,
    Event,
    Finish,
    Interrupt,
    ModelCompleted,
    ModelFailed,
    ModelItem,
    Notify,
    Resume,
    RunTools,
    ToolResult,
    ToolsChanged,
    UserInput,
)
from ._fragments import turn_aborted_fragment
from ._items import FunctionCall, FunctionCallOutput, Item, Message, Usage
from ._tokens import ByteEstimator, TokenCounter
from .model._types import ModelRequest

AUTO_COMPACT_PERCENT = 90
ABORTED_OUTPUT = "aborted: the turn ended before this tool call finished"


@dataclass(frozen=True)
class CoreConfig:
    """Everything fixed for the agent's life. Budgets here are the ones the core can count."""

    agent_id: str
    model: str
    instructions: str
    tools: tuple[dict[str, Any], ...] = ()
    context_window: int = 272_000
    auto_compact_token_limit: int | None = None
    tool_output_token_limit: int = 10_000
    max_turns: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    parallel_tool_calls: bool = True
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def compact_limit(self) -> int:
        ceiling = self.context_window * AUTO_COMPACT_PERCENT // 100
        if self.auto_compact_token_limit is None:
            return ceiling
        return min(self.auto_compact_token_limit, ceiling)


class AgentCore:
    """Feed it events with `handle`; execute the actions it answers; feed back the results."""

    def __init__(self, config: CoreConfig, *, counter: TokenCounter | None = None) -> None:
        self.config = config
        self._counter = counter or ByteEstimator()
        self.history: list[Item] = []
        self.tools: tuple[dict[str, Any], ...] = config.tools
        self.status = AgentStatus.PENDING
        self._context = ContextTracker()
        self._waiting: str = "input"  # input | model | tools | compaction | done
        self._response: list[Item] = []
        self._pending_calls: list[FunctionCall] = []
        self._results: dict[str, ToolResult] = {}
        self._queued: list[UserInput | Notify] = []
        self._last_usage: Usage | None = None
        self._usage_index = 0
        self._compacted_since_request = False
        self.total_usage = Usage()
        self.model_requests = 0
        self.tool_calls = 0
        self.final_message: str | None = None

    # -- queries ----------------------------------------------------------------------------

    @property
    def waiting_for(self) -> str:
        """What the core awaits: input, model, tools, compaction, or done."""
        return self._waiting

    def context_tokens(self) -> int:
        """The reported usage of the last response plus an estimate for what came after."""
        since = self.history[self._usage_index :]
        if self._last_usage is None:
            base = self._counter.count_text(self.config.instructions)
            return base + self._counter.count_items(since)
        return self._last_usage.total_tokens + self._counter.count_items(since)

    def pending_actions(self) -> list[Action]:
        """The actions a driver must (re)issue to make progress, e.g. after a replay."""
        if self._waiting == "model":
            self._response = []
            return [CallModel(self._request())]
        if self._waiting == "tools":
            missing = tuple(c for c in self._pending_calls if c.call_id not in self._results)
            return [RunTools(missing)] if missing else []
        if self._waiting == "compaction":
            return [self._compact_action()]
        return []

    def build_request(self) -> ModelRequest:
        return self._request()

    # -- the one entry point ----------------------------------------------------------------

    def handle(self, event: Event) -> list[Action]:
        """Apply one event and answer the actions it calls for."""
        match event:
            case UserInput():
                return self._on_user_input(event)
            case Notify():
                return self._on_notify(event)
            case ModelItem():
                self._expect("model", event)
                self._response.append(event.item)
                return []
            case ModelCompleted():
                return self._on_model_completed(event)
            case ModelFailed():
                self._expect_any(("model", "compaction"), event)
                return self._finish(AgentStatus.FAILED, error=event.error)
            case ToolResult():
                return self._on_tool_result(event)
            case CompactionDone():
                return self._on_compaction_done(event)
            case CompactionFailed():
                self._expect("compaction", event)
                return self._finish(AgentStatus.FAILED, error=f"compaction failed: {event.error}")
            case BudgetExceeded():
                if self._waiting == "done":
                    return []
                return self._finish(AgentStatus.BUDGET_EXCEEDED, error=event.reason)
            case Interrupt():
                return self._on_interrupt(event)
            case Resume():
                return self._on_resume()
            case ToolsChanged():
                self.tools = event.tools
                return []

    # -- turns ------------------------------------------------------------------------------

    def _on_user_input(self, event: UserInput) -> list[Action]:
        if self._waiting in ("model", "tools", "compaction"):
            self._queued.append(event)
            return []
        self.status = AgentStatus.RUNNING
        self._append_input(event)
        return self._next_request()

    def _on_notify(self, event: Notify) -> list[Action]:
        if self._waiting in ("model", "tools", "compaction"):
            self._queued.append(event)
        else:
            self.history.append(Message(role="user", text=event.text))
        return []

    def _append_input(self, event: UserInput) -> None:
        self.history.extend(self._context.items_for(event.context))
        self.history.append(Message(role="user", text=event.text))

    def _drain_queue(self) -> None:
        for queued in self._queued:
            if isinstance(queued, UserInput):
                self._append_input(queued)
            else:
                self.history.append(Message(role="user", text=queued.text))
        self._queued.clear()

    def _next_request(self) -> list[Action]:
        self._drain_queue()
        over = self._budget_problem()
        if over is not None:
            return self._finish(AgentStatus.BUDGET_EXCEEDED, error=over)
        if not self._compacted_since_request and self.context_tokens() >= self.config.compact_limit:
            self._waiting = "compaction"
            return [self._compact_action()]
        self._waiting = "model"
        self._response = []
        return [CallModel(self._request())]

    def _budget_problem(self) -> str | None:
        cfg = self.config
        if cfg.max_turns is not None and self.model_requests >= cfg.max_turns:
            used = self.model_requests
            return f"turn budget exceeded: {used} of {cfg.max_turns} model requests used"
        if cfg.max_tokens is not None and self.total_usage.total_tokens >= cfg.max_tokens:
            used = self.total_usage.total_tokens
            return f"token budget exceeded: {used} of {cfg.max_tokens} tokens used"
        return None

    def _request(self) -> ModelRequest:
        return ModelRequest(
            model=self.config.model,
            instructions=self.config.instructions,
            input=tuple(self.history),
            tools=self.tools,
            prompt_cache_key=self.config.agent_id,
            metadata=dict(self.config.metadata),
            parallel_tool_calls=self.config.parallel_tool_calls,
        )

    def _on_model_completed(self, event: ModelCompleted) -> list[Action]:
        self._expect("model", event)
        self.history.extend(self._response)
        self._last_usage = event.usage
        self._usage_index = len(self.history)
        self._compacted_since_request = False
        self.total_usage = self.total_usage + event.usage
        self.model_requests += 1
        calls = [i for i in self._response if isinstance(i, FunctionCall)]
        messages = [i for i in self._response if isinstance(i, Message) and i.role == "assistant"]
        self._response = []
        if messages:
            self.final_message = messages[-1].text
        if not calls:
            if self._queued:
                return self._next_request()
            return self._finish(AgentStatus.COMPLETED, message=self.final_message)
        return self._start_tools(calls)

    def _start_tools(self, calls: list[FunctionCall]) -> list[Action]:
        limit = self.config.max_tool_calls
        if limit is not None and self.tool_calls + len(calls) > limit:
            self._pending_calls = calls
            reason = (
                f"tool-call budget exceeded: {self.tool_calls} of {limit} used, "
                f"{len(calls)} more asked"
            )
            return self._finish(AgentStatus.BUDGET_EXCEEDED, error=reason)
        self.tool_calls += len(calls)
        self._pending_calls = calls
        self._results = {}
        self._waiting = "tools"
        return [RunTools(tuple(calls))]

    def _on_tool_result(self, event: ToolResult) -> list[Action]:
        self._expect("tools", event)
        known = {c.call_id for c in self._pending_calls}
        if event.call_id not in known:
            raise CoreStateError(f"tool result for unknown call id {event.call_id!r}")
        self._results[event.call_id] = event
        if len(self._results) < len(self._pending_calls):
            return []
        self._record_outputs()
        return self._next_request()

    def _record_outputs(self) -> None:
        limit = self.config.tool_output_token_limit
        for call in self._pending_calls:
            result = self._results.get(call.call_id)
            text, ok = (result.output, result.success) if result else (ABORTED_OUTPUT, False)
            output = truncate_middle(text, limit)
            self.history.append(FunctionCallOutput(call_id=call.call_id, output=output, success=ok))
        self._pending_calls = []
        self._results = {}

    # -- compaction -------------------------------------------------------------------------

    def _compact_action(self) -> Compact:
        request, dropped = build_compaction_request(self._request(), self._counter)
        return Compact(request=request, dropped_items=dropped)

    def _on_compaction_done(self, event: CompactionDone) -> list[Action]:
        self._expect("compaction", event)
        self.total_usage = self.total_usage + event.usage
        self.history = rebuild_after_compaction(
            self.history, event.summary, self._context.initial_items(), self._counter
        )
        self._last_usage = None
        self._usage_index = 0
        self._compacted_since_request = True
        return self._next_request()

    # -- endings ----------------------------------------------------------------------------

    def _on_interrupt(self, event: Interrupt) -> list[Action]:
        if self._waiting in ("input", "done"):
            return []
        return self._finish(
            AgentStatus.INTERRUPTED, error=event.reason, marker=turn_aborted_fragment()
        )

    def _on_resume(self) -> list[Action]:
        if self._waiting != "done" or self.status is AgentStatus.COMPLETED:
            return []
        self.status = AgentStatus.RUNNING
        return self._next_request()

    def _finish(
        self,
        status: AgentStatus,
        *,
        message: str | None = None,
        error: str | None = None,
        marker: str | None = None,
    ) -> list[Action]:
        self._response = []
        if self._pending_calls:
            self._record_outputs()
        if marker is not None:
            self.history.append(Message(role="user", text=marker))
        self._queued_to_history()
        self.status = status
        self._waiting = "done"
        return [Finish(status=status, message=message, error=error)]

    def _queued_to_history(self) -> None:
        if self._queued:
            self._drain_queue()

    def _expect(self, waiting: str, event: Event) -> None:
        self._expect_any((waiting,), event)

    def _expect_any(self, waiting: Sequence[str], event: Event) -> None:
        if self._waiting not in waiting:
            raise CoreStateError(
                f"event {event.kind!r} arrived while the agent waits for {self._waiting}"
            )
