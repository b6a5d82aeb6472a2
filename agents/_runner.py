"""The local runner: the anyio `Effects` that `carry_out` drives an `AgentCore` with.

It owns the I/O the core refuses to do: model calls, tool calls, the journal, the clock and
cancellation. Every event is written to the journal before the core sees it, and every tool
call is written to the side-effect ledger before it runs, so a replay knows what happened.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio

from corral.tools import (
    ToolCall,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    first_batch,
    run_tool_calls,
)

from ._compaction import DroppedItems
from ._core import AgentCore
from ._errors import CoreStateError
from ._events import (
    Action,
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
    RunTools,
    ToolResult,
    ToolsChanged,
    WallTimeUp,
    event_to_payload,
)
from ._hooks import RunnerHooks, SafeHooks
from ._host import carry_out
from ._items import FunctionCall, Message, Usage
from ._outputs import journaled_result, ledger_output
from ._preparations import CompactionGate, Preparations, open_preparations
from ._store import JournalEvent, LedgerEntry, Store
from .model import ModelClient, ModelError, ModelRequest, ModelResponse

CLEANUP_TIMEOUT = 10.0


SharedBudget = Callable[[Usage, float, int], str | None]
"""Charges one model response (usage, its cost, the tool calls it asked for) to a budget that
several agents share; answers why that budget is exhausted, or None."""


CompactionHook = Callable[[bool, str, str | None], Awaitable[None]]


@dataclass(frozen=True)
class RunnerLimits:
    """Budgets kept outside the agent, shared with others (the core keeps its own: turns,
    tool calls, tokens, cost, cost growth and the verdict on wall time)."""

    shared: SharedBudget | None = None
    projected: Callable[[float], str | None] | None = None
    """Why a request of this estimated USD cost would overrun a shared budget, or None."""
    run_deadline: tuple[float, str] | None = None
    """When the whole run's wall time is up (anyio's clock), and the reason to end with then."""


@dataclass
class AgentRunner:
    """Drives one core until it finishes. Not reusable across agents."""

    core: AgentCore
    model: ModelClient
    registry: ToolRegistry
    tool_context: ToolContext
    store: Store
    hooks: RunnerHooks = field(default_factory=RunnerHooks)
    limits: RunnerLimits = field(default_factory=RunnerLimits)
    clock: Callable[[], float] = time.time
    compaction_gate: CompactionGate | None = None
    on_compaction: CompactionHook | None = None
    """Told before (False) and after (True) each summary, with its trigger and any error: the
    user's PreCompact and PostCompact hooks."""
    interrupt_reason: str = Interrupt().reason
    """Why the agent stopped when its turn is cancelled; its host says who cancels it."""

    def __post_init__(self) -> None:
        self._hooks = SafeHooks(self.hooks)
        # Taken around every journal write; nobody else holds it most of the time, and a fast
        # acquire then skips the yield to the event loop that a plain anyio lock makes.
        self._lock = anyio.Lock(fast_acquire=True)
        self._preparations: Preparations | None = None
        self._tools_version = self.registry.version
        self._repeats: dict[str, str] = {}
        self._started: set[str] = set()
        """Calls whose ledger entry went to the journal with the response that asked for them."""
        self._finish_written: tuple[Finish, dict[str, object]] | None = None
        """The `Finish` a response's write already recorded in the agent's row, with the
        columns it wrote: `_record_finish` need not write them again."""

    @property
    def agent_id(self) -> str:
        return self.core.config.agent_id

    def run_again(self, call_id: str, *, ledger_state: str) -> None:
        """Let the next `RunTools` run `call_id` although the ledger has it in `ledger_state`.

        For resume: a call without side effects that was interrupted is run again, its ledger
        entry reused (and finished, unless it is already).
        """
        self._repeats[call_id] = ledger_state

    def retire(self) -> None:
        """The agent will not run again in this process: let go of what only its turns use
        (its conversation and its tools), so that a run of many agents does not keep every
        finished one whole. Its totals, status and final message stay; the journal keeps the
        rest, for resume and status."""
        self.core.history = []
        self.core.tools = ()
        self.registry = ToolRegistry()

    @property
    def cost_usd(self) -> float:
        return self.core.spent_usd

    @property
    def spent_usd(self) -> float:
        return self.core.spent_usd

    @spent_usd.setter
    def spent_usd(self, value: float) -> None:
        """What the agent spent before this runner took over (a resumed agent keeps it)."""
        self.core.spent_usd = value

    async def feed(self, event: Event) -> list[Action]:
        """Journal `event`, then hand it to the core."""
        async with self._lock:
            return await self._feed_locked(event)

    async def take_journaled(self, event: Event, record: JournalEvent) -> list[Action]:
        """Hand the core `event`, which its host journaled already as `record` (a root agent's
        task goes to the journal with the agent's own row): what `feed` does, but the write."""
        async with self._lock:
            self._hooks.event(self.agent_id, record.seq, event.kind, record.payload)
            return self.core.handle(event)

    async def _feed_locked(self, event: Event) -> list[Action]:
        payload = event_to_payload(event)
        record = await self.store.append_event(self.agent_id, event.kind, payload, at=self.clock())
        self._hooks.event(self.agent_id, record.seq, event.kind, payload)
        return self.core.handle(event)

    async def _feed_all(self, events: Sequence[Event]) -> list[Action]:
        """Journal `events` in one write, then hand them to the core in order."""
        async with self._lock:
            payloads = [event_to_payload(event) for event in events]
            batch = [(event.kind, payload) for event, payload in zip(events, payloads, strict=True)]
            records = await self.store.append_events(self.agent_id, batch, at=self.clock())
            actions: list[Action] = []
            for event, payload, record in zip(events, payloads, records, strict=True):
                self._hooks.event(self.agent_id, record.seq, event.kind, payload)
                actions.extend(self.core.handle(event))
            return actions

    async def _feed_response(
        self, events: Sequence[Event], usage: Usage, tool_calls: int
    ) -> list[Action]:
        """A model response's events: the core folds them first (nothing is acted on before
        they are journaled), so that the agent's new usage and cost, and the ledger entries of
        the tool calls that start at once, go to the journal in the same write as the events:
        one round trip per response, not three. The shared budget is charged first, so no call
        it refuses is entered in the ledger."""
        async with self._lock:
            payloads = [event_to_payload(event) for event in events]
            actions = [action for event in events for action in self.core.handle(event)]
            refused = self._charge_shared(usage, tool_calls, actions)
            starts = self._ledger_starts(actions) if refused is None else []
            finish = next((a for a in actions if isinstance(a, Finish)), None)
            update = self._agent_columns(finish)
            batch = [(event.kind, payload) for event, payload in zip(events, payloads, strict=True)]
            records = await self.store.append_events(
                self.agent_id, batch, at=self.clock(), agent_update=update, ledger_starts=starts
            )
            self._started.update(entry.call_id for entry in starts)
            self._finish_written = None if finish is None else (finish, update)
            for event, payload, record in zip(events, payloads, records, strict=True):
                self._hooks.event(self.agent_id, record.seq, event.kind, payload)
        if refused is not None:
            return await self.feed(BudgetExceeded(reason=refused))
        return actions

    def _ledger_starts(self, actions: Sequence[Action]) -> list[LedgerEntry]:
        """The ledger entries of the calls that `run_tools` will start at once."""
        run = next((a for a in actions if isinstance(a, RunTools)), None)
        if run is None:
            return []
        calls = [ToolCall(call_id=c.call_id, name=c.name, arguments=c.arguments) for c in run.calls]
        now = self.clock()
        return [
            LedgerEntry.of_call(call, self.agent_id, started_at=now)
            for call in first_batch(self.registry, calls)
            if call.call_id not in self._repeats
        ]

    async def notify_if_busy(self, text: str) -> bool:
        """Queue `text` for the model's next request if a turn is under way; else do nothing.

        Checking and feeding happen under the journal lock, so a turn cannot end in between.
        """
        async with self._lock:
            if not self.core.waiting_for.busy:
                return False
            event = Notify(text=text)
            payload = event_to_payload(event)
            record = await self.store.append_event(
                self.agent_id, event.kind, payload, at=self.clock()
            )
            self._hooks.event(self.agent_id, record.seq, event.kind, payload)
            self.core.handle(event)
            return True

    async def drive(self, actions: list[Action]) -> Finish:
        """Execute `actions` and all that follow until the core finishes."""
        own = self.core.config.max_wall_time_s
        run = self.limits.run_deadline
        run_left = None if run is None else max(run[0] - anyio.current_time(), 0.0)
        run_first = run_left is not None and (own is None or run_left < own)
        try:
            with anyio.fail_after(run_left if run_first else own):
                async with open_preparations() as self._preparations:
                    return await self._loop(actions)
        except TimeoutError:
            if run_first and run is not None:
                return await self._finish_now(BudgetExceeded(reason=run[1]))
            return await self._finish_now(WallTimeUp())
        except anyio.get_cancelled_exc_class():
            with anyio.move_on_after(CLEANUP_TIMEOUT, shield=True):
                await self._finish_now(Interrupt(reason=self.interrupt_reason))
            raise

    async def _finish_now(self, event: Event) -> Finish:
        for action in await self.feed(event):
            if isinstance(action, Finish):
                return await self._record_finish(action)
        return await self._record_finish(Finish(status=self.core.status, error="stopped"))

    async def _loop(self, actions: list[Action]) -> Finish:
        turn = self.core.model_requests
        self._hooks.turn_started(self.agent_id, turn)
        finish = await carry_out(actions, self)
        self._hooks.turn_ended(self.agent_id, turn, finish.status)
        return await self._record_finish(finish)

    # -- the local `Effects` -----------------------------------------------------------------

    async def between_steps(self, queue: list[Action]) -> Finish | None:
        return None  # background summaries feed the core themselves; cancellation stops a turn

    async def prepare_compaction(self, action: PrepareCompaction) -> list[Action]:
        if self._preparations is not None:
            self._preparations.start(action, self._summarise_in_background)
        return []

    async def over_budget(self, action: OverBudget) -> list[Action]:
        return await self.feed(BudgetExceeded(reason=action.reason))

    async def call_model(self, action: CallModel) -> list[Action]:
        if self.registry.version != self._tools_version:
            action = await self._refresh_tools(action)
        projected = self.limits.projected
        refused = projected(self.core.request_estimate()) if projected is not None else None
        if refused is not None:
            return await self.feed(BudgetExceeded(reason=refused))
        self._hooks.model_call_started(self.agent_id, action.request)
        try:
            response = await self.model.complete(action.request)
        except ModelError as exc:
            self._hooks.model_call_ended(self.agent_id, action.request, None, exc)
            return await self.feed(ModelFailed(error=str(exc)))
        self._hooks.model_call_ended(self.agent_id, action.request, response, None)
        # The response's items and its completion go to the journal in one write: nothing is
        # acted on until all of them are in, so one transaction keeps "journal, then act".
        items = self.core.unique_call_ids(response.items)
        events: list[Event] = [ModelItem(item=item) for item in items]
        events.append(ModelCompleted(usage=response.usage, model=response.model))
        calls = sum(1 for item in response.items if isinstance(item, FunctionCall))
        return await self._feed_response(events, response.usage, calls)

    async def _refresh_tools(self, action: CallModel) -> CallModel:
        """The registry changed since the last request: tell the core, rebuild the request."""
        self._tools_version = self.registry.version
        tools = tuple(self.registry.responses_tools())
        if tools == self.core.tools:
            return action
        await self.feed(ToolsChanged(tools=tools))
        return CallModel(self.core.build_request())

    def _charge_shared(
        self, usage: Usage, tool_calls: int, actions: Sequence[Action]
    ) -> str | None:
        """Charge the shared budget; why it stops the agent, or None. The core's own verdict,
        if any, comes first."""
        shared = self.limits.shared
        reason = shared(usage, self.core.last_cost, tool_calls) if shared is not None else None
        if reason is None or any(isinstance(a, Finish | OverBudget) for a in actions):
            return None
        return reason

    async def run_tools(self, action: RunTools) -> list[Action]:
        calls = [
            ToolCall(call_id=c.call_id, name=c.name, arguments=c.arguments) for c in action.calls
        ]
        by_id = {c.call_id: c for c in action.calls}
        follow_up: list[Action] = []

        async def started(call: ToolCall) -> None:
            if call.call_id in self._repeats or call.call_id in self._started:
                self._started.discard(call.call_id)  # entered with the response that asked
                self._hooks.tool_call_started(self.agent_id, by_id[call.call_id])
                return
            await self.store.ledger_start(
                LedgerEntry.of_call(call, self.agent_id, started_at=self.clock())
            )
            self._hooks.tool_call_started(self.agent_id, by_id[call.call_id])

        async def ended(call: ToolCall, output: ToolOutput) -> None:
            follow_up.extend(await self._record_tool_result(by_id[call.call_id], output))

        await run_tool_calls(
            self.registry, calls, self.tool_context, on_start=started, on_result=ended
        )
        return follow_up

    async def _record_tool_result(self, call: FunctionCall, output: ToolOutput) -> list[Action]:
        config = self.core.config
        result = journaled_result(
            call.call_id,
            output,
            token_limit=config.tool_output_token_limit,
            max_bytes=config.max_tool_output_bytes,
        )
        # Shielded: a result that reached the ledger must reach the journal too.
        with anyio.CancelScope(shield=True):
            if self._repeats.pop(call.call_id, "started") == "finished":
                self._hooks.tool_call_ended(self.agent_id, call, output)
                actions = await self.feed(result)
            else:
                actions = await self._finish_call(call, output, result)
        return actions

    async def _finish_call(
        self, call: FunctionCall, output: ToolOutput, result: ToolResult
    ) -> list[Action]:
        """The call's outcome in the ledger and its result in the journal, in one write."""
        async with self._lock:
            payload = event_to_payload(result)
            record = await self.store.ledger_finish(
                self.agent_id,
                call.call_id,
                output=ledger_output(result),
                success=output.success,
                at=self.clock(),
                event=(result.kind, payload),
            )
            assert record is not None, "a store answers the event it was given"
            self._hooks.tool_call_ended(self.agent_id, call, output)
            self._hooks.event(self.agent_id, record.seq, result.kind, payload)
            return self.core.handle(result)

    async def compact(self, action: Compact) -> list[Action]:
        try:
            done = await self._summarise(action)
        except ModelError as exc:
            return await self.feed(CompactionFailed(error=str(exc)))
        return await self.feed(done)

    async def _summarise(self, action: Compact) -> CompactionDone:
        self._hooks.compaction_started(self.agent_id, action.dropped_items)
        await self._compaction_hook(False, "auto")
        try:
            response = await self._gated_summary(action.request, background=False)
        except ModelError as exc:
            self._hooks.compaction_ended(self.agent_id, str(exc))
            await self._compaction_hook(True, "auto", str(exc))
            raise
        self._hooks.compaction_ended(self.agent_id, None)
        await self._compaction_hook(True, "auto")
        summary = _last_assistant_text(response.items)
        return CompactionDone(summary=summary, usage=response.usage, dropped=action.dropped)

    async def _compaction_hook(self, ended: bool, trigger: str, error: str | None = None) -> None:
        if self.on_compaction is not None:
            await self.on_compaction(ended, trigger, error)

    async def _summarise_in_background(self, action: PrepareCompaction) -> list[Action]:
        """A background summary, fed back whenever it is ready (the core takes it in any state)."""
        result = CompactionPrepared(
            prepared_id=action.prepared_id,
            covered_items=action.covered_items,
            dropped=action.dropped,
        )
        self._hooks.compaction_started(self.agent_id, action.dropped.count)
        await self._compaction_hook(False, "early")
        try:
            response = await self._gated_summary(action.request, background=True)
        except ModelError as exc:
            self._hooks.compaction_ended(self.agent_id, str(exc))
            await self._compaction_hook(True, "early", str(exc))
            return await self.feed(result.model_copy(update={"error": str(exc)}))
        self._hooks.compaction_ended(self.agent_id, None)
        await self._compaction_hook(True, "early")
        summary = _last_assistant_text(response.items)
        return await self.feed(
            result.model_copy(update={"summary": summary, "usage": response.usage})
        )

    async def await_preparation(self, action: AwaitPreparedCompaction) -> list[Action]:
        if self.compaction_gate is not None:
            self.compaction_gate.hurry(self.agent_id)
        running = self._preparations
        actions = await running.wait(action.prepared_id) if running is not None else None
        if actions is not None:
            return actions
        lost = CompactionPrepared(
            prepared_id=action.prepared_id,
            covered_items=action.covered_items,
            error="the background summary was lost when the agent was resumed",
        )
        return await self.feed(lost)

    async def _gated_summary(self, request: ModelRequest, *, background: bool) -> ModelResponse:
        if self.compaction_gate is None:
            return await self.model.complete(request)
        async with self.compaction_gate.slot(self.agent_id, background=background):
            return await self.model.complete(request)

    async def compact_now(self) -> DroppedItems | None:
        """Compact this idle agent's history now, journaled so a replay reaches the same history.

        Answers what was dropped, or None when nothing is new since the last compaction. Other
        events wait until it is done. Raises `CoreStateError` while the agent is running, and
        `ModelError` when no summary could be made (the history is then left as it was).
        """
        async with self._lock:
            if not self.core.waiting_for.idle:
                raise CoreStateError(
                    f"agent {self.agent_id} is busy (waiting for {self.core.waiting_for}); "
                    "compact it once its turn has ended"
                )
            actions = await self._feed_locked(CompactRequested())
            compact = next((a for a in actions if isinstance(a, Compact)), None)
            if compact is None:
                return None
            try:
                done = await self._summarise(compact)
            except ModelError as exc:
                await self._feed_locked(CompactionFailed(error=str(exc)))
                raise
            await self._feed_locked(done)
            return compact.dropped

    def _agent_columns(self, finish: Finish | None) -> dict[str, object]:
        """The agent row's columns after a response: its spending, and how it ended if the
        response ended its turn (written with the response, one write fewer per turn)."""
        columns: dict[str, object] = {
            "usage": self.core.total_usage.model_dump(),
            "cost_usd": self.core.spent_usd,
            "updated_at": self.clock(),
        }
        if finish is not None:
            columns |= {
                "status": str(finish.status),
                "final_message": finish.message,
                "error": finish.error,
            }
        return columns

    async def _record_finish(self, finish: Finish) -> Finish:
        written, self._finish_written = self._finish_written, None
        columns = self._agent_columns(finish)
        if written is not None and written[0] is finish and _same_row(written[1], columns):
            return finish  # the response that ended the turn wrote it, and nothing changed since
        await self.store.update_agent(self.agent_id, **columns)
        return finish


def _same_row(before: dict[str, object], now: dict[str, object]) -> bool:
    return all(before[key] == value for key, value in now.items() if key != "updated_at")


def _last_assistant_text(items: Sequence[object]) -> str:
    texts = [i.text for i in items if isinstance(i, Message) and i.role == "assistant"]
    return texts[-1] if texts else ""
