"""`AgentCore`: one agent as a pure state machine.

It is fed events and answers actions; it does no I/O, reads no clock and starts no task, so the
local runner, the Temporal executor and the unit tests drive the very same object. History is
append-only between compactions, which is what keeps request n+1 a byte-exact extension of
request n. Context fragments are rendered elsewhere; the core decides when to send them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from corral.tools._truncate import truncate_middle

from ._call_ids import CallIds
from ._compaction import (
    DroppedItems,
    build_compaction_request,
    closed_prefix_len,
    describe_dropped,
    rebuild_history,
)
from ._context import ContextTracker
from ._core_config import CoreConfig as CoreConfig
from ._core_config import Waiting
from ._errors import CoreStateError
from ._events import (
    Action,
    AgentStatus,
    AwaitPreparedCompaction,
    BudgetExceeded,
    CallModel,
    Compact,
    CompactionDone,
    CompactionFailed,
    CompactionPrepared,
    CompactRequested,
    Event,
    Finish,
    Interrupt,
    ModelCompleted,
    ModelFailed,
    ModelItem,
    Notify,
    OverBudget,
    PrepareCompaction,
    ResponseDiscarded,
    Resume,
    RunTools,
    ToolResult,
    ToolsChanged,
    UserInput,
    WallTimeUp,
)
from ._fragments import turn_aborted_fragment
from ._images import retire_old_images
from ._items import FunctionCall, FunctionCallOutput, Item, Message, Usage
from ._spend import AgentSpend, SpendBreaker
from ._tokens import ByteEstimator, TailCount, TokenCounter
from .model._types import ModelRequest

ABORTED_OUTPUT = "aborted: the turn ended before this tool call finished"


@dataclass
class _Preparation:
    """A background compaction the core asked for; `summary` is None while it runs."""

    prepared_id: int
    covered: int
    dropped: DroppedItems
    summary: str | None = None


class AgentCore:
    """Feed it events with `handle`; execute the actions it answers; feed back the results."""

    def __init__(self, config: CoreConfig, *, counter: TokenCounter | None = None) -> None:
        self.config = config
        self._counter = counter or ByteEstimator()
        self._tail = TailCount(self._counter)
        self.history: list[Item] = []
        self.tools: tuple[dict[str, Any], ...] = config.tools
        self.status = AgentStatus.PENDING
        self._context = ContextTracker()
        self._waiting = Waiting.INPUT
        self._response: list[Item] = []
        self._pending_calls: list[FunctionCall] = []
        self._results: dict[str, ToolResult] = {}
        self._call_ids = CallIds()
        self._queued: list[UserInput | Notify] = []
        self._last_usage: Usage | None = None
        self._usage_index = 0
        self._compacted_since_request = False
        self._compacted_len = 0
        self._preparation: _Preparation | None = None
        self._preparation_seq = 0
        self._awaiting_preparation = False
        self._manual_covered: int | None = None
        self.last_compaction: DroppedItems | None = None
        self.compactions = 0
        self.total_usage = Usage()
        self.model_requests = 0
        self.tool_calls = 0
        self.final_message: str | None = None
        breaker = SpendBreaker(config.max_cost_growth, config.growth_baseline_turns)
        self._spend = AgentSpend(config.price, config.max_cost_usd, breaker)
        self.last_cost = 0.0
        """The cost of the last model response (what a driver charges a shared budget)."""

    # -- queries ----------------------------------------------------------------------------

    @property
    def waiting_for(self) -> Waiting:
        """What the core awaits (a `StrEnum`: it compares equal to its value)."""
        return self._waiting

    @property
    def partial_response(self) -> bool:
        """Whether items of a model response arrived that has not completed (after a replay:
        the process stopped while it journaled them)."""
        return bool(self._response)

    def context_tokens(self) -> int:
        """The reported usage of the last response plus an estimate for what came after."""
        since = self._tail.count(self.history[self._usage_index :])
        if self._last_usage is None:
            return self._counter.count_text(self.config.instructions) + since
        return self._last_usage.total_tokens + since

    def pending_actions(self) -> list[Action]:
        """The actions a driver must (re)issue to make progress, e.g. after a replay."""
        if self._waiting is Waiting.MODEL:
            return self._call_model([])
        if self._waiting is Waiting.TOOLS:
            missing = tuple(c for c in self._pending_calls if c.call_id not in self._results)
            return [RunTools(missing)] if missing else []
        if self._waiting is Waiting.COMPACTION:
            prep = self._preparation
            if self._awaiting_preparation and prep is not None:
                return [AwaitPreparedCompaction(prep.prepared_id, prep.covered)]
            return [self._compact_action()]
        return []

    @property
    def spent_usd(self) -> float:
        """What the agent's model responses cost (its summaries are not counted)."""
        return self._spend.spent_usd

    @spent_usd.setter
    def spent_usd(self, value: float) -> None:
        """What the agent spent before (a resumed agent keeps the journal's record of it)."""
        self._spend.spent_usd = value

    def restart_growth_baseline(self) -> None:
        """The growth breaker's baseline counts again from the next turn (a resumed agent)."""
        self._spend.restart_baseline()

    def request_estimate(self) -> float:
        """The next request's input cost at the uncached price (for a shared budget's check)."""
        return self._spend.estimate(self.context_tokens())

    def build_request(self) -> ModelRequest:
        return self._request()

    def unique_call_id(self, item: Item) -> Item:
        """`item` as the core will take it in: a repeated or missing call id made unique.

        Drivers journal this form, so the journal names each call as the ledger does.
        """
        return self._call_ids.preview(item)

    def unique_call_ids(self, items: list[Item]) -> list[Item]:
        """`unique_call_id` of each of a response's items, as if each were taken in before the
        next (drivers journal a response's items together)."""
        return self._call_ids.preview_all(items)

    # -- the one entry point ----------------------------------------------------------------

    def handle(self, event: Event) -> list[Action]:
        """Apply one event and answer the actions it calls for."""
        match event:
            case UserInput():
                return self._on_user_input(event)
            case Notify():
                return self._on_notify(event)
            case ModelItem():
                self._expect(Waiting.MODEL, event)
                self._response.append(self._call_ids.admit(event.item))
                return []
            case ModelCompleted():
                return self._on_model_completed(event)
            case ModelFailed():
                self._expect_any((Waiting.MODEL, Waiting.COMPACTION), event)
                return self._finish(AgentStatus.FAILED, error=event.error)
            case ToolResult():
                return self._on_tool_result(event)
            case CompactionDone():
                return self._on_compaction_done(event)
            case CompactionFailed():
                return self._on_compaction_failed(event)
            case CompactionPrepared():
                return self._on_compaction_prepared(event)
            case CompactRequested():
                return self._on_compact_requested()
            case BudgetExceeded():
                return self._over_budget(event.reason)
            case WallTimeUp():
                limit = self.config.max_wall_time_s
                return self._over_budget(f"wall-time budget exceeded: {limit or 0:g} s")
            case Interrupt():
                return self._on_interrupt(event)
            case Resume():
                return self._on_resume()
            case ResponseDiscarded():
                self._expect(Waiting.MODEL, event)
                self._response = []
                return []
            case ToolsChanged():
                self.tools = event.tools
                return []

    # -- turns ------------------------------------------------------------------------------

    def _on_user_input(self, event: UserInput) -> list[Action]:
        if self._waiting.busy:
            self._queued.append(event)
            return []
        self.status = AgentStatus.RUNNING
        self._manual_covered = None
        self._append_input(event)
        return self._next_request()

    def _on_notify(self, event: Notify) -> list[Action]:
        if self._waiting.busy:
            self._queued.append(event)
        else:
            self.history.append(Message(role=event.role, text=event.text))
        return []

    def _append_input(self, event: UserInput) -> None:
        self.history.extend(self._context.items_for(event.context))
        self.history.append(Message(role="user", text=event.text))
        self.history.extend(Message(role="user", text=text) for text in event.attachments)

    def _drain_queue(self) -> None:
        for queued in self._queued:
            if isinstance(queued, UserInput):
                self._append_input(queued)
            else:
                self.history.append(Message(role=queued.role, text=queued.text))
        self._queued.clear()

    def _next_request(self) -> list[Action]:
        self._drain_queue()
        over = self._budget_problem()
        if over is not None:
            return self._finish(AgentStatus.BUDGET_EXCEEDED, error=over)
        self._apply_preparation()
        if not self._compacted_since_request and self.context_tokens() >= self.config.compact_limit:
            self._waiting = Waiting.COMPACTION
            prep = self._preparation
            if prep is not None:  # still running: waiting for it beats starting afresh
                self._awaiting_preparation = True
                return [AwaitPreparedCompaction(prep.prepared_id, prep.covered)]
            return [self._compact_action()]
        return self._call_model(self._maybe_prepare(len(self.history)))

    def _call_model(self, prepare: list[Action]) -> list[Action]:
        """Ask for the next response, unless what it would cost overruns the cost budget."""
        self._waiting = Waiting.MODEL
        self._response = []
        refused = self._spend.before_request(self.context_tokens())
        if refused is not None:
            return [OverBudget(refused)]
        return [*prepare, CallModel(self._request())]

    def _over_budget(self, reason: str) -> list[Action]:
        if self._waiting is Waiting.DONE:
            return []
        return self._finish(AgentStatus.BUDGET_EXCEEDED, error=reason)

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
            tools=(*self.tools, *self.config.hosted_tools),
            prompt_cache_key=self.config.agent_id,
            metadata=dict(self.config.metadata),
            parallel_tool_calls=self.config.parallel_tool_calls,
        )

    def _on_model_completed(self, event: ModelCompleted) -> list[Action]:
        self._expect(Waiting.MODEL, event)
        response_start = len(self.history)
        self.history.extend(self._response)
        self._last_usage = event.usage
        self._usage_index = len(self.history)
        self._compacted_since_request = False
        self.total_usage = self.total_usage + event.usage
        self.model_requests += 1
        self.last_cost, verdict = self._spend.charge(event.usage)
        actions = self._after_response(response_start)
        if verdict is None or any(isinstance(a, Finish) for a in actions):
            return actions
        return [OverBudget(verdict)]

    def _after_response(self, response_start: int) -> list[Action]:
        calls = [i for i in self._response if isinstance(i, FunctionCall)]
        messages = [i for i in self._response if isinstance(i, Message) and i.role == "assistant"]
        self._response = []
        if messages:
            self.final_message = messages[-1].text
        if not calls:
            if self._queued:
                return self._next_request()
            return self._finish(AgentStatus.COMPLETED, message=self.final_message)
        actions = self._start_tools(calls)
        if self._waiting is not Waiting.TOOLS:
            return actions
        covered = closed_prefix_len(self.history[:response_start])
        return [*self._maybe_prepare(covered), *actions]

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
        self._waiting = Waiting.TOOLS
        return [RunTools(tuple(calls))]

    def _on_tool_result(self, event: ToolResult) -> list[Action]:
        self._expect(Waiting.TOOLS, event)
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
        images: list[str] = []
        for call in self._pending_calls:
            result = self._results.get(call.call_id)
            text, ok = (result.output, result.success) if result else (ABORTED_OUTPUT, False)
            cut = result is not None and result.total_bytes is not None
            output = text if cut else truncate_middle(text, limit)
            self.history.append(FunctionCallOutput(call_id=call.call_id, output=output, success=ok))
            images += result.images if result else ()
        if images:
            # After every output of the batch: Chat Completions wants a call's tool messages
            # together, and has no image form for a tool message.
            self.history.append(Message(role="user", text="", images=tuple(images)))
            retire_old_images(self.history)
        self._pending_calls = []
        self._results = {}

    # -- compaction -------------------------------------------------------------------------

    def _compact_action(self) -> Compact:
        dropped = describe_dropped(self.history, self._counter)
        request = build_compaction_request(self._request())
        return Compact(request=request, dropped_items=dropped.count, dropped=dropped)

    def _maybe_prepare(self, covered: int) -> list[Action]:
        """Ask for a background summary of the first `covered` items once past the early limit."""
        early = self.config.early_compact_limit
        if early is None or self._preparation is not None or covered <= self._compacted_len:
            return []
        if not early <= self.context_tokens() < self.config.compact_limit:
            return []
        self._preparation_seq += 1
        dropped = describe_dropped(self.history[:covered], self._counter)
        self._preparation = _Preparation(self._preparation_seq, covered, dropped)
        request = build_compaction_request(self._request(), covered)
        return [PrepareCompaction(self._preparation_seq, request, covered, dropped)]

    def _apply_preparation(self) -> None:
        prep = self._preparation
        if prep is None or prep.summary is None:
            return
        self._preparation = None
        self._replace_history(prep.summary, prep.covered, prep.dropped)

    def _replace_history(self, summary: str, covered: int, dropped: DroppedItems) -> None:
        context = self._context.initial_items()
        self.history = rebuild_history(self.history, summary, context, self._counter, covered)
        self._last_usage = None
        self._usage_index = 0
        self._compacted_len = len(self.history)
        self.last_compaction = dropped
        self.compactions += 1

    def _on_compaction_done(self, event: CompactionDone) -> list[Action]:
        manual = self._manual_covered if self._waiting.idle else None
        if manual is None:
            self._expect(Waiting.COMPACTION, event)
        covered = len(self.history) if manual is None else manual
        self.total_usage = self.total_usage + event.usage
        dropped = event.dropped or describe_dropped(self.history[:covered], self._counter)
        self._preparation = None  # it covered a history that is gone now
        self._manual_covered = None
        self._replace_history(event.summary, covered, dropped)
        if manual is not None:
            return []
        self._compacted_since_request = True
        return self._next_request()

    def _on_compaction_failed(self, event: CompactionFailed) -> list[Action]:
        if self._manual_covered is not None and self._waiting.idle:
            self._manual_covered = None  # a manual compaction leaves the history as it was
            return []
        self._expect(Waiting.COMPACTION, event)
        return self._finish(AgentStatus.FAILED, error=f"compaction failed: {event.error}")

    def _on_compaction_prepared(self, event: CompactionPrepared) -> list[Action]:
        self.total_usage = self.total_usage + event.usage
        prep = self._preparation
        if prep is None or prep.prepared_id != event.prepared_id or prep.summary is not None:
            return []  # stale: a compaction or the end of the turn overtook it
        if event.covered_items != prep.covered:
            raise CoreStateError(
                f"preparation {prep.prepared_id} covered {prep.covered} items, "
                f"not {event.covered_items}"
            )
        awaiting, self._awaiting_preparation = self._awaiting_preparation, False
        if event.error is not None:
            self._preparation = None
            return [self._compact_action()] if awaiting else []
        prep.summary = event.summary
        return self._next_request() if awaiting else []

    def _on_compact_requested(self) -> list[Action]:
        if not self._waiting.idle:
            raise CoreStateError(
                f"a manual compaction needs an idle agent; this one waits for {self._waiting}"
            )
        covered = closed_prefix_len(self.history)
        if covered <= self._compacted_len:
            return []  # nothing new since the last compaction
        self._manual_covered = covered
        dropped = describe_dropped(self.history[:covered], self._counter)
        request = build_compaction_request(self._request(), covered)
        return [Compact(request=request, dropped_items=dropped.count, dropped=dropped)]

    # -- endings ----------------------------------------------------------------------------

    def _on_interrupt(self, event: Interrupt) -> list[Action]:
        if self._waiting.idle:
            return []
        return self._finish(
            AgentStatus.INTERRUPTED, error=event.reason, marker=turn_aborted_fragment()
        )

    def _on_resume(self) -> list[Action]:
        if self._waiting is not Waiting.DONE or self.status is AgentStatus.COMPLETED:
            return []
        self._manual_covered = None
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
        self._awaiting_preparation = False
        if self._preparation is not None and self._preparation.summary is None:
            self._preparation = None  # the driver abandons background work when a turn ends
        if self._pending_calls:
            self._record_outputs()
        if marker is not None:
            self.history.append(Message(role="user", text=marker))
        self._queued_to_history()
        self.status = status
        self._waiting = Waiting.DONE
        return [Finish(status=status, message=message, error=error)]

    def _queued_to_history(self) -> None:
        if self._queued:
            self._drain_queue()

    def _expect(self, waiting: Waiting, event: Event) -> None:
        self._expect_any((waiting,), event)

    def _expect_any(self, waiting: Sequence[Waiting], event: Event) -> None:
        if self._waiting not in waiting:
            raise CoreStateError(
                f"event {event.kind!r} arrived while the agent waits for {self._waiting}"
            )
