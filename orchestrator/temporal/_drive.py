"""`AgentDriver`: one agent's `AgentCore` held in a workflow and driven deterministically.

It does what `agents.AgentRunner` does locally, with every piece of I/O an activity: model calls
and summaries on the shared queue, preparing the agent and its tool batches on its host's queue.
Events the workflow makes itself (a budget stop, a lost summary) wait in `pending` and are
journaled by the next activity, numbered by the `seq` the driver counts. A host that stops
answering raises `HostLost`; the item's workflow restarts the item elsewhere.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, TimeoutType
from temporalio.exceptions import TimeoutError as ActivityTimeout

with workflow.unsafe.imports_passed_through():
    from pydantic import TypeAdapter

    from agents import (
        Action,
        AgentCore,
        AwaitPreparedCompaction,
        BudgetExceeded,
        CallModel,
        Compact,
        CompactionDone,
        CompactionFailed,
        CompactionPrepared,
        CoreConfig,
        Event,
        Finish,
        FunctionCall,
        ModelRequest,
        PrepareCompaction,
        RunTools,
        Usage,
        event_from_payload,
        event_to_payload,
    )

    from ._wire import (
        ItemInput,
        JournalBatch,
        ModelCallInput,
        ModelCallOutput,
        PreparedAgent,
        PrepareInput,
        ToolBatchInput,
        ToolBatchOutput,
    )

PREPARE_TIMEOUT = timedelta(minutes=5)
HOST_ATTEMPTS = 3
_HOST_GONE = (TimeoutType.SCHEDULE_TO_START, TimeoutType.HEARTBEAT)
_REQUEST = TypeAdapter(ModelRequest)
_CALL = TypeAdapter(FunctionCall)
_LOST = "the background summary was lost when its activity was given up"


class HostLost(Exception):
    """The agent's host missed a heartbeat or never picked up its work."""


class AgentDriver:
    """Drives one agent of item `item` on the host whose queue is `host_queue`."""

    def __init__(self, item: ItemInput, agent_id: str, host_queue: str, shared_queue: str) -> None:
        self.item = item
        self.policy = item.policy
        self.agent_id = agent_id
        self.host_queue = host_queue
        self.shared_queue = shared_queue
        self.core: AgentCore | None = None
        self.spec: dict[str, Any] = {}
        self.seq = 0
        self.pending: list[dict[str, Any]] = []
        self.cost = 0.0
        self.max_cost: float | None = None
        self.tool_hosts: list[str] = []
        self._preparations: dict[int, tuple[PrepareCompaction, workflow.ActivityHandle[Any]]] = {}

    # -- the whole agent --------------------------------------------------------------------

    async def run(self) -> Finish:
        """Prepare the agent on its host, then drive it to its end."""
        prepared: PreparedAgent = await self._on_host(
            "corral.prepare_agent",
            PrepareInput(item=self.item, agent_id=self.agent_id, host=self.host_queue),
            PreparedAgent,
            PREPARE_TIMEOUT,
        )
        self.spec = prepared.spec
        self.max_cost = prepared.max_cost_usd
        self.core = AgentCore(_core_config(prepared.core_config))
        self.seq = 1  # the task, journaled by the preparation
        actions = self.core.handle(event_from_payload(prepared.first_event))
        try:
            async with asyncio.timeout(prepared.max_wall_time_s):
                return await self._loop(actions)
        except TimeoutError:
            reason = f"wall-time budget exceeded: {prepared.max_wall_time_s:g} s"
            return self._finish_now(BudgetExceeded(reason=reason))
        finally:
            for _, handle in self._preparations.values():
                handle.cancel()

    def take_journal(self) -> JournalBatch:
        """The events not journaled yet, numbered; the driver counts them as written."""
        events = tuple(self.pending)
        batch = JournalBatch(agent_id=self.agent_id, first_seq=self.seq + 1, events=events)
        self.seq += len(self.pending)
        self.pending = []
        return batch

    def _finish_now(self, event: Event) -> Finish:
        for action in self._feed(event):
            if isinstance(action, Finish):
                return action
        assert self.core is not None
        return Finish(status=self.core.status, error="stopped")

    async def _loop(self, actions: list[Action]) -> Finish:
        queue = list(actions)
        while queue:
            queue.extend(self._collect_preparations())
            action = queue.pop(0)
            if isinstance(action, Finish):
                return action
            queue.extend(await self._execute(action))
        raise AssertionError("the core stopped without finishing")  # pragma: no cover

    async def _execute(self, action: Action) -> list[Action]:
        if isinstance(action, CallModel):
            return await self._call_model(action)
        if isinstance(action, RunTools):
            return await self._run_tools(action)
        if isinstance(action, Compact):
            return await self._compact(action)
        if isinstance(action, PrepareCompaction):
            self._start_preparation(action)
            return []
        if isinstance(action, AwaitPreparedCompaction):
            return await self._await_preparation(action)
        raise AssertionError(f"unexpected action {action!r}")  # pragma: no cover

    # -- events -----------------------------------------------------------------------------

    def _feed(self, event: Event) -> list[Action]:
        """An event the workflow made: the core sees it now, the next activity journals it."""
        assert self.core is not None
        self.pending.append(event_to_payload(event))
        return self.core.handle(event)

    def _apply(self, events: tuple[dict[str, Any], ...]) -> list[Action]:
        """Events an activity made and journaled already."""
        assert self.core is not None
        actions: list[Action] = []
        for payload in events:
            self.seq += 1
            actions.extend(self.core.handle(event_from_payload(payload)))
        return actions

    # -- model calls ------------------------------------------------------------------------

    async def _call_model(self, action: CallModel) -> list[Action]:
        out = await self._model(action.request, summary=False)
        actions = self._apply(out.events)
        self.cost += out.cost_usd
        limit = self.max_cost
        if limit is None or self.cost < limit or any(isinstance(a, Finish) for a in actions):
            return actions
        reason = f"cost budget exceeded: ${self.cost:.4f} of ${limit:.4f} spent"
        return self._feed(BudgetExceeded(reason=reason))

    def _model_input(self, request: ModelRequest, *, summary: bool) -> ModelCallInput:
        return ModelCallInput(
            spec=self.spec,
            request=_REQUEST.dump_python(request, mode="json"),
            journal=self.take_journal(),
            summary=summary,
        )

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

    async def _run_tools(self, action: RunTools) -> list[Action]:
        batch = ToolBatchInput(
            spec=self.spec,
            calls=tuple(_CALL.dump_python(c, mode="json") for c in action.calls),
            journal=self.take_journal(),
        )
        timeout = timedelta(seconds=self.policy.tool_timeout_s)
        out: ToolBatchOutput = await self._on_host(
            "corral.run_tools", batch, ToolBatchOutput, timeout
        )
        if out.host not in self.tool_hosts:
            self.tool_hosts.append(out.host)
        return self._apply(out.events)

    async def _on_host(self, name: str, arg: Any, result: type[Any], limit: timedelta) -> Any:
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

    async def _compact(self, action: Compact) -> list[Action]:
        out = await self._model(action.request, summary=True)
        if out.error is not None:
            return self._feed(CompactionFailed(error=out.error))
        usage = Usage.model_validate(out.usage)
        done = CompactionDone(summary=out.summary, usage=usage, dropped=action.dropped)
        return self._feed(done)

    def _start_preparation(self, action: PrepareCompaction) -> None:
        arg = self._model_input(action.request, summary=True)
        handle = workflow.start_activity("corral.call_model", arg, **self._model_options())
        self._preparations[action.prepared_id] = (action, handle)

    def _collect_preparations(self) -> list[Action]:
        """Feed the summaries that finished in the background, oldest first."""
        actions: list[Action] = []
        for prepared_id in sorted(self._preparations):
            action, handle = self._preparations[prepared_id]
            if handle.done():
                del self._preparations[prepared_id]
                actions.extend(self._feed(_prepared(action, handle)))
        return actions

    async def _await_preparation(self, action: AwaitPreparedCompaction) -> list[Action]:
        found = self._preparations.pop(action.prepared_id, None)
        if found is None:
            lost = CompactionPrepared(
                prepared_id=action.prepared_id, covered_items=action.covered_items, error=_LOST
            )
            return self._feed(lost)
        prepare, handle = found
        await asyncio.wait([handle])
        return self._feed(_prepared(prepare, handle))


def _prepared(
    action: PrepareCompaction, handle: workflow.ActivityHandle[Any]
) -> CompactionPrepared:
    result = CompactionPrepared(
        prepared_id=action.prepared_id, covered_items=action.covered_items, dropped=action.dropped
    )
    error = handle.exception()
    out: ModelCallOutput | None = None if error is not None else handle.result()
    if out is None or out.error is not None:
        message = out.error if out is not None else str(error)
        return result.model_copy(update={"error": message or _LOST})
    usage = Usage.model_validate(out.usage)
    return result.model_copy(update={"summary": out.summary, "usage": usage})


def _core_config(data: dict[str, Any]) -> CoreConfig:
    fields = dict(data)
    fields["tools"] = tuple(fields.get("tools", ()))
    fields["metadata"] = dict(fields.get("metadata", {}))
    return CoreConfig(**fields)
