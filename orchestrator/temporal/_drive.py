"""`AgentDriver`: one agent's `AgentCore` held in a workflow and driven deterministically.

It is the workflow's `agents.Effects`: `agents.carry_out` runs the same loop over it as over the
local `AgentRunner`, with every piece of I/O an activity: model calls and summaries on the
shared queue, preparing the agent and its tool batches on its host's queue.
Events the workflow makes itself (a budget stop, a lost summary, a collab tool's result) wait in
`pending` and are journaled by the next activity, numbered by the `seq` the driver counts. Tool
calls held for approval wait in the workflow (`_tool_flow`); collab calls go to the workflow's
`CollabTools`. A host that stops answering raises `HostLost`; a long history raises
`ContinueAsNewSuggested` at a point where `carry` and `resume` can hand the agent over.
A summary fires the PreCompact and PostCompact hooks of the worker's `[hooks]` around it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Protocol

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, TimeoutType
from temporalio.exceptions import TimeoutError as ActivityTimeout

with workflow.unsafe.imports_passed_through():
    from pydantic import TypeAdapter

    from corral.agents import (
        NOTE_KINDS,
        Action,
        AgentCore,
        AgentStatus,
        AwaitPreparedCompaction,
        BudgetExceeded,
        CallModel,
        Compact,
        CompactionDone,
        CompactionFailed,
        CoreConfig,
        Event,
        Finish,
        FunctionCall,
        ModelRequest,
        OverBudget,
        PrepareCompaction,
        RunTools,
        ToolResult,
        Usage,
        WallTimeUp,
        carry_out,
        event_from_payload,
        event_to_payload,
    )

    from ._approvals import ApprovalBook
    from ._budgets import RunLink
    from ._lifecycle_flow import fire_compaction_hooks
    from ._summaries import BackgroundSummaries, lost_summary, summary_outcome
    from ._tool_flow import answer_asks, run_tool_batch
    from ._wire import (
        ActivityPolicy,
        AgentCarry,
        ApprovalAnswer,
        JournalBatch,
        ModelCallInput,
        ModelCallOutput,
        PreparedAgent,
        WireSpec,
    )

PREPARE_TIMEOUT = timedelta(minutes=30)
"""Room for the agent's start hooks, one command after another (each killed at its `timeout`);
a host that dies meanwhile is noticed by its missed heartbeats, not by this."""
HOST_ATTEMPTS = 3
_HOST_GONE = (TimeoutType.SCHEDULE_TO_START, TimeoutType.HEARTBEAT)
_REQUEST = TypeAdapter(ModelRequest)


class CollabTools(Protocol):
    """The workflow's handler of the supervisor's tools (spawn, message, wait, close, list)."""

    names: frozenset[str]

    async def handle(self, call: FunctionCall) -> tuple[str, bool]: ...


Mail = Callable[[], list[Event]]
"""Events the workflow's signal handlers left for a busy core (notifications, interrupts)."""


class HostLost(Exception):
    """The agent's host missed a heartbeat or never picked up its work."""


class ContinueAsNewSuggested(Exception):
    """The history is long: the workflow should continue as new (the driver stopped at a point
    where the journal holds everything the core was fed)."""


class AgentDriver:
    """Drives one agent whose host has the queue `host_queue`."""

    def __init__(
        self,
        agent_id: str,
        policy: ActivityPolicy,
        host_queue: str,
        shared_queue: str,
        approvals: ApprovalBook | None = None,
    ) -> None:
        self.policy = policy
        self.agent_id = agent_id
        self.host_queue = host_queue
        self.shared_queue = shared_queue
        self.approvals = approvals or ApprovalBook()
        self.collab: CollabTools | None = None
        self.mail: Mail | None = None
        self.run: RunLink | None = None
        """The run's budget, when the run has one."""
        self.core: AgentCore | None = None
        self._spec: WireSpec | None = None
        self.seq = 0
        self.pending: list[dict[str, Any]] = []
        self.max_wall_time_s: float | None = None
        self.tool_hosts: list[str] = []
        self.core_config: dict[str, Any] = {}
        self.hook_events: frozenset[str] = frozenset()
        """The lifecycle events the worker's `[hooks]` runs commands on (`_lifecycle_flow`)."""
        self.wall_used_s = 0.0
        """Wall time spent in this turn by earlier runs of the workflow (continue-as-new)."""
        self.may_continue_as_new: Callable[[], bool] = lambda: False
        """Whether the workflow can hand the agent to its next run now (`carry`, `resume`)."""
        self._steps = 0
        self._preparations = BackgroundSummaries()

    # -- the whole agent --------------------------------------------------------------------

    @property
    def spec(self) -> WireSpec:
        """The agent's spec, once `prepare` or `resume` has it."""
        if self._spec is None:
            raise RuntimeError(f"agent {self.agent_id}'s spec is used before it is prepared")
        return self._spec

    @property
    def cost(self) -> float:
        """What the agent's model responses cost (its core keeps the tally)."""
        return self.core.spent_usd if self.core is not None else 0.0

    async def prepare(self, activity: str, arg: Any) -> list[Action]:
        """Prepare the agent on its host; answer the actions of its first event."""
        prepared: PreparedAgent = await self.on_host(activity, arg, PreparedAgent, PREPARE_TIMEOUT)
        self._spec = prepared.spec
        self.max_wall_time_s = prepared.max_wall_time_s
        self.core_config = prepared.core_config
        self.hook_events = frozenset(prepared.hook_events)
        self.core = AgentCore(CoreConfig.from_data(prepared.core_config))
        first = () if prepared.first_event is None else (prepared.first_event,)
        actions = self._apply((*prepared.notes, *first))  # journaled by the preparation
        if prepared.blocked is not None:  # a start hook blocked the task: the turn ends here
            return [Finish(status=AgentStatus.FAILED, error=prepared.blocked)]
        return actions

    async def resume(self, carry: AgentCarry) -> list[Action]:
        """Take the agent over from an earlier run of the workflow: its core is rebuilt from
        its journal; answer the actions that carry its turn on."""
        self._spec, self.core_config = carry.spec, carry.core_config
        self.max_wall_time_s, self.wall_used_s = carry.max_wall_time_s, carry.wall_used_s
        self.tool_hosts = list(carry.tool_hosts)
        self.hook_events = frozenset(carry.hook_events)
        events: list[dict[str, Any]] = await workflow.execute_activity(
            "corral.agent_events",
            self.agent_id,
            task_queue=self.shared_queue,
            result_type=list[dict[str, Any]],
            start_to_close_timeout=timedelta(seconds=self.policy.journal_timeout_s),
            retry_policy=RetryPolicy(maximum_attempts=self.policy.journal_attempts),
        )
        self.core = AgentCore(CoreConfig.from_data(carry.core_config))
        self._apply(tuple(events))
        self.core.spent_usd = carry.cost_usd
        return self.core.pending_actions()

    def carry(self, host: str, restarts: int = 0) -> AgentCarry:
        """What the next run of the workflow needs to take this agent over."""
        return AgentCarry(
            agent_id=self.agent_id,
            host=host,
            spec=self.spec,
            core_config=self.core_config,
            cost_usd=self.cost,
            max_cost_usd=self.core.config.max_cost_usd if self.core is not None else None,
            max_wall_time_s=self.max_wall_time_s,
            wall_used_s=self.wall_used_s,
            tool_hosts=tuple(self.tool_hosts),
            restarts=restarts,
            hook_events=tuple(sorted(self.hook_events)),
        )

    async def drive(self, actions: list[Action]) -> Finish:
        """Carry out `actions` and all that follow until the core finishes its turn; raises
        `ContinueAsNewSuggested` (with the journal up to date) when the history grew long."""
        left, timeout = self._time_left()
        started = workflow.now()
        try:
            async with asyncio.timeout(left):
                finish = await carry_out(actions, self)
        except ContinueAsNewSuggested:
            self.wall_used_s += (workflow.now() - started).total_seconds()
            await self.flush()
            raise
        except TimeoutError:
            finish = self.finish_now(timeout)
        finally:
            self._preparations.cancel_all()
        self.wall_used_s = 0.0  # the budget is per turn
        return finish

    def _time_left(self) -> tuple[float | None, Event]:
        """Seconds this turn may take (the agent's wall-time budget or the run's deadline,
        whichever comes first), and the event that ends it when they are up."""
        limit = self.max_wall_time_s
        left = None if limit is None else max(limit - self.wall_used_s, 0.0)
        run_left = None if self.run is None else self.run.deadline_left()
        if run_left is not None and (left is None or run_left < left):
            assert self.run is not None
            return run_left, BudgetExceeded(reason=self.run.wall_reason())
        return left, WallTimeUp()

    def _may_stop_here(self, queue: list[Action]) -> bool:
        """Whether to continue as new before `queue`: only where the core's own pending
        actions (after a replay) are exactly `queue`, and after some progress in this run."""
        if self._steps == 0 or not self.may_continue_as_new():
            return False
        # A verdict is not what a rebuilt core would answer again: journal it first.
        if len(queue) != 1 or isinstance(queue[0], Finish | OverBudget) or self._preparations:
            return False
        return self._history_long()

    def _history_long(self) -> bool:
        info = workflow.info()
        after = self.policy.continue_as_new_after
        if after is not None and info.get_current_history_length() >= after:
            return True
        return info.is_continue_as_new_suggested()

    @property
    def busy(self) -> bool:
        return self.core is not None and self.core.waiting_for.busy

    def take_journal(self) -> JournalBatch:
        """The events not journaled yet, numbered; the driver counts them as written."""
        events = tuple(self.pending)
        batch = JournalBatch(agent_id=self.agent_id, first_seq=self.seq + 1, events=events)
        self.seq += len(self.pending)
        self.pending = []
        return batch

    def finish_now(self, event: Event) -> Finish:
        """End the turn with `event` (a budget stop, an interrupt)."""
        for action in self.feed(event):
            if isinstance(action, Finish):
                return action
        assert self.core is not None
        return Finish(status=self.core.status, error="stopped")

    # -- the workflow's `Effects` -------------------------------------------------------------

    async def between_steps(self, queue: list[Action]) -> Finish | None:
        """Feed finished background summaries and the handlers' mail, keep the run's budget,
        and continue as new where the history grew long (raises `ContinueAsNewSuggested`)."""
        queue.extend(await self._collect_preparations())
        stop = self.run.stop if self.run is not None else None
        if stop is not None and not any(isinstance(a, Finish) for a in queue):
            return self.finish_now(BudgetExceeded(reason=stop))
        mailed = self._collect_mail()
        ended = next((a for a in mailed if isinstance(a, Finish)), None)
        if ended is not None:
            return ended
        queue.extend(mailed)
        if self._may_stop_here(queue):
            raise ContinueAsNewSuggested()
        self._steps += 1
        return None

    async def prepare_compaction(self, action: PrepareCompaction) -> list[Action]:
        await fire_compaction_hooks(self, ended=False, trigger="early")
        self._start_preparation(action)
        return []

    async def over_budget(self, action: OverBudget) -> list[Action]:
        return self.feed(BudgetExceeded(reason=action.reason))

    # -- events -----------------------------------------------------------------------------

    def feed(self, event: Event) -> list[Action]:
        """An event the workflow made: the core sees it now, the next activity journals it."""
        assert self.core is not None
        self.pending.append(event_to_payload(event))
        return self.core.handle(event)

    def note(self, payload: dict[str, Any]) -> None:
        """A journal note (not an input of the core), journaled by the next activity."""
        self.pending.append(payload)

    def _apply(self, events: tuple[dict[str, Any], ...]) -> list[Action]:
        """Events an activity made and journaled already; notes are counted, not fed."""
        assert self.core is not None
        actions: list[Action] = []
        for payload in events:
            self.seq += 1
            if payload["kind"] not in NOTE_KINDS:
                actions.extend(self.core.handle(event_from_payload(payload)))
        return actions

    def _collect_mail(self) -> list[Action]:
        """What the workflow's handlers left for the core, fed only while a turn is under way
        and only here, between activities, so the journal holds events in the order fed."""
        if self.mail is None or not self.busy:
            return []
        actions: list[Action] = []
        for event in self.mail():
            actions.extend(self.feed(event))
        return actions

    # -- model calls ------------------------------------------------------------------------

    async def call_model(self, action: CallModel) -> list[Action]:
        out = await self._model(action.request, summary=False)
        actions = self._apply(out.events)
        shared = await self._charge_run(out)  # the core's own verdict, if any, comes first
        if shared is None or any(isinstance(a, Finish | OverBudget) for a in actions):
            return actions
        return self.feed(BudgetExceeded(reason=shared))

    async def _charge_run(self, out: ModelCallOutput) -> str | None:
        """Charge the run's budget with a model call; answer why it is exhausted, or None."""
        if self.run is None or out.error is not None:
            return None
        calls = sum(1 for e in out.events if _is_function_call(e))
        return await self.run.charge(out.usage, out.cost_usd, calls)

    def _model_input(
        self, request: ModelRequest, *, summary: bool, background: bool = False
    ) -> ModelCallInput:
        # A background activity runs beside the agent's next steps, in whatever order the
        # workers pick them up: events it carried would be numbered before the next step's and
        # might be written after them (a gap the journal refuses), or never (it is cancelled
        # when the turn ends). So it carries none; they wait for the next step's activity.
        journal = self._empty_journal() if background else self.take_journal()
        return ModelCallInput(
            spec=self.spec,
            request=_REQUEST.dump_python(request, mode="json"),
            journal=journal,
            summary=summary,
        )

    def _empty_journal(self) -> JournalBatch:
        return JournalBatch(agent_id=self.agent_id, first_seq=self.seq + 1)

    def _model_options(self) -> dict[str, Any]:
        return {
            "task_queue": self.shared_queue,
            "result_type": ModelCallOutput,
            "start_to_close_timeout": timedelta(seconds=self.policy.model_timeout_s),
            "heartbeat_timeout": timedelta(seconds=self.policy.heartbeat_s),
            "retry_policy": RetryPolicy(maximum_attempts=self.policy.model_attempts),
        }

    async def _model(self, request: ModelRequest, *, summary: bool) -> ModelCallOutput:
        arg = self._model_input(request, summary=summary)
        out: ModelCallOutput = await workflow.execute_activity(
            "corral.call_model", arg, **self._model_options()
        )
        return out

    # -- tools ------------------------------------------------------------------------------

    async def run_tools(self, action: RunTools) -> list[Action]:
        collab = self.collab
        mine = [c for c in action.calls if collab is not None and c.name in collab.names]
        others = [c for c in action.calls if c not in mine]
        actions = await self._host_tools(others) if others else []
        for call in mine:
            assert collab is not None
            text, ok = await collab.handle(call)
            actions.extend(self.feed(ToolResult(call_id=call.call_id, output=text, success=ok)))
        return actions

    async def _host_tools(self, calls: list[FunctionCall]) -> list[Action]:
        """Run `calls` on the host; calls held for approval run again once answered."""
        actions: list[Action] = []
        answers: list[ApprovalAnswer] = []
        while calls:
            out = await run_tool_batch(self, calls, tuple(answers))
            actions.extend(self._apply(out.events))
            answers.extend(await answer_asks(self, out.asks))
            held = {ask.call_id for ask in out.asks}
            calls = [c for c in calls if c.call_id in held]
        return actions

    async def flush(self) -> None:
        """Journal the pending events now (any worker may)."""
        if self.pending:
            await workflow.execute_activity(
                "corral.journal",
                self.take_journal(),
                task_queue=self.shared_queue,
                start_to_close_timeout=timedelta(seconds=self.policy.journal_timeout_s),
                retry_policy=RetryPolicy(maximum_attempts=self.policy.journal_attempts),
            )

    async def on_host(self, name: str, arg: Any, result: type[Any], limit: timedelta) -> Any:
        """Run activity `name` on the agent's host; `HostLost` if the host is gone."""
        try:
            return await workflow.execute_activity(
                name,
                arg,
                task_queue=self.host_queue,
                result_type=result,
                start_to_close_timeout=limit,
                schedule_to_start_timeout=timedelta(seconds=self.policy.host_start_s),
                heartbeat_timeout=timedelta(seconds=self.policy.heartbeat_s),
                retry_policy=RetryPolicy(maximum_attempts=HOST_ATTEMPTS),
            )
        except ActivityError as exc:
            cause = exc.cause
            if isinstance(cause, ActivityTimeout) and cause.type in _HOST_GONE:
                raise HostLost(f"{name} timed out ({cause.type.name.lower()})") from exc
            raise

    # -- compaction -------------------------------------------------------------------------

    async def compact(self, action: Compact) -> list[Action]:
        await fire_compaction_hooks(self, ended=False, trigger="auto")
        out = await self._model(action.request, summary=True)
        await fire_compaction_hooks(self, ended=True, trigger="auto", error=out.error)
        if out.error is not None:
            return self.feed(CompactionFailed(error=out.error))
        usage = Usage.model_validate(out.usage)
        done = CompactionDone(summary=out.summary, usage=usage, dropped=action.dropped)
        return self.feed(done)

    def _start_preparation(self, action: PrepareCompaction) -> None:
        arg = self._model_input(action.request, summary=True, background=True)
        handle = workflow.start_activity("corral.call_model", arg, **self._model_options())
        self._preparations.add(action, handle)

    async def _collect_preparations(self) -> list[Action]:
        """Feed the summaries that finished in the background, oldest first."""
        actions: list[Action] = []
        for action, handle in self._preparations.take_done():
            actions.extend(await self._feed_prepared(action, handle))
        return actions

    async def _feed_prepared(
        self, action: PrepareCompaction, handle: workflow.ActivityHandle[Any]
    ) -> list[Action]:
        prepared = summary_outcome(action, handle)
        await fire_compaction_hooks(self, ended=True, trigger="early", error=prepared.error)
        return self.feed(prepared)

    async def await_preparation(self, action: AwaitPreparedCompaction) -> list[Action]:
        found = self._preparations.take(action.prepared_id)
        if found is None:
            return self.feed(lost_summary(action))
        prepare, handle = found
        await asyncio.wait([handle])
        return await self._feed_prepared(prepare, handle)


def _is_function_call(payload: dict[str, Any]) -> bool:
    item = payload.get("item")
    return (
        payload["kind"] == "model_item"
        and isinstance(item, dict)
        and (item.get("type") == "function_call")
    )
