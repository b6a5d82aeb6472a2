"""The supervisor's collab tools inside an agent's workflow: workers are child workflows.

`spawn_agent` builds the worker's spec in an activity (the supervisor's own code) and starts
its `AgentWorkflow`; `send_input` signals it; `wait_agent` is a `wait_condition` on the status
the workers report by signal, with a durable timer for `timeout_ms`; `close_agent` cancels the
worker's workflow and journals it `closed`. An agent addresses its own workers only (its
direct children). Limits (depth, the thread limit, the spawn queue, the run's budget) and which
queued worker starts when a slot frees are decided by the local runtime's own code
(`_run._admission`); a queued worker's workflow starts only once it is admitted.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, CancelledError, ChildWorkflowError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel, ValidationError

    from corral.agents import AgentStatus, FunctionCall

    from .._run import (
        CLOSED,
        Capacity,
        capacity_among,
        never_started,
        no_more_input,
        ready_among,
        spawn_refusal,
    )
    from .._run._fragments import render_notification
    from .._run._names import nickname
    from ..supervisor import COLLAB_TOOL_NAMES
    from ..supervisor._catalog import TASK_PREVIEW_CHARS, WAIT_MAX_MS
    from ..supervisor._tools import (
        CloseAgentArgs,
        ListAgentsArgs,
        SendInputArgs,
        SpawnAgentArgs,
        WaitAgentArgs,
    )
    from ._drive import AgentDriver
    from ._wire import (
        AgentEndedInput,
        AgentInput,
        AgentOutput,
        JournalBatch,
        SendInput,
        SpawnedSpec,
        SpawnSpecInput,
        WireSpec,
        agent_workflow_id,
    )

AGENT_WORKFLOW = "corral.AgentWorkflow"
ENDED_SIGNAL = "agent_ended"
SEND_INPUT_SIGNAL = "send_input"


ArgsT = TypeVar("ArgsT", bound="BaseModel")


class Refused(Exception):
    """A collab call that cannot be carried out; its message goes to the model."""


@dataclass
class Worker:
    """One worker of this agent, as its parent's workflow knows it."""

    spec: WireSpec
    task: str
    start: AgentInput
    """Its workflow's argument; messages sent while it waits to start join its inbox."""
    handle: workflow.ChildWorkflowHandle[Any, AgentOutput] | None = None
    """None until its workflow has started."""
    status: str = str(AgentStatus.RUNNING)
    message: str | None = None
    closed: bool = False
    queued: bool = False
    """Waiting for a thread slot (see `_run._admission`)."""

    @property
    def final(self) -> bool:
        done = self.handle is not None and self.handle.done()
        return self.closed or done or AgentStatus(self.status).is_final

    @property
    def running(self) -> bool:
        return not self.final

    @property
    def open(self) -> bool:
        """Its workflow runs (even idle, its turn done), or it still waits to start."""
        return not self.closed if self.handle is None else not self.handle.done()

    @property
    def waiting_to_start(self) -> bool:
        return self.queued and self.running

    @property
    def holds_slot(self) -> bool:
        return self.running and not self.queued

    def label(self) -> str:
        if self.closed:
            return CLOSED
        return "queued" if self.waiting_to_start else self.status


class WorkflowCollab:
    """The collab tools of the agent `me`, whose workflow holds `driver`."""

    names = frozenset(COLLAB_TOOL_NAMES)

    def __init__(self, me: AgentInput, driver: AgentDriver) -> None:
        self.me = me
        self.driver = driver
        self.workers: dict[str, Worker] = {}
        self.messages: list[str] = []
        """Notifications from workers that ended, for this agent's next request or turn."""

    # -- the tools --------------------------------------------------------------------------

    async def handle(self, call: FunctionCall) -> tuple[str, bool]:
        try:
            answer = await self._dispatch(call)
        except Refused as exc:
            return str(exc), False
        return json.dumps(answer, ensure_ascii=False), True

    async def _dispatch(self, call: FunctionCall) -> dict[str, Any]:
        if call.name == "spawn_agent":
            return await self._spawn(_args(SpawnAgentArgs, call))
        if call.name == "send_input":
            return await self._send(_args(SendInputArgs, call))
        if call.name == "wait_agent":
            return await self._wait(_args(WaitAgentArgs, call))
        if call.name == "close_agent":
            return await self._close(_args(CloseAgentArgs, call))
        _args(ListAgentsArgs, call)
        agents = [self._describe(w) for w in self.workers.values()]
        return {"agents": agents, "capacity": self.capacity().as_json()}

    async def _spawn(self, args: SpawnAgentArgs) -> dict[str, Any]:
        run = self.driver.run
        depth = self.me.spec.depth
        stop = run.stop if run is not None else None
        refused = spawn_refusal(depth, self.capacity(), self.me.limits.agents(), stop)
        if refused is not None:
            raise Refused(refused)
        queued = not self.capacity().has_room
        spawned = await self._spec_for(args, queued)
        if spawned.spec is None:
            raise Refused(spawned.refused or "the worker was refused")
        me = self.me
        child = AgentInput(
            run_id=me.run_id,
            spec=spawned.spec,
            task=args.message,
            subagent_context=spawned.subagent_context,
            parent_workflow_id=workflow.info().workflow_id,
            limits=me.limits,
            policy=me.policy,
            run_terms=me.run_terms,
        )
        worker = Worker(spec=spawned.spec, task=args.message, start=child, queued=queued)
        self.workers[worker.spec.agent_id] = worker
        if not queued:
            await self._start(worker)
        await self.admit_waiting()  # a slot may have freed while its spec was built
        return {
            "agent_id": worker.spec.agent_id,
            "nickname": worker.spec.nickname,
            "status": worker.label(),
            "capacity": self.capacity().as_json(),
        }

    def capacity(self) -> Capacity:
        """How many of this agent's workers run and wait, and the thread limit."""
        return capacity_among(self.workers.values(), self.me.limits.agents())

    async def _start(self, worker: Worker) -> None:
        worker.handle = await workflow.start_child_workflow(
            AGENT_WORKFLOW,
            worker.start,
            id=agent_workflow_id(self.me.run_id, worker.spec.agent_id),
            result_type=AgentOutput,
            parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
        )

    async def admit_waiting(self) -> None:
        """Start the queued workers that free slots allow, in order; once the run's budget is
        spent, end them unstarted instead (as locally)."""
        ready = ready_among(list(self.workers.values()), self.me.limits.agents())
        for worker in ready:  # all taken off the queue before any await: none starts twice
            worker.queued = False
        stop = self.driver.run.stop if self.driver.run is not None else None
        for worker in ready:
            if stop is None:
                await self._start(worker)
            else:
                await self._never_started(worker, never_started(stop))

    async def _never_started(self, worker: Worker, reason: str) -> None:
        status = str(AgentStatus.BUDGET_EXCEEDED)
        ended = AgentEndedInput(
            agent_id=worker.spec.agent_id,
            status=status,
            error=reason,
            journal=JournalBatch(agent_id=worker.spec.agent_id, first_seq=1),
        )
        await workflow.execute_activity("corral.agent_ended", ended, **self._options())
        self.ended(AgentOutput(agent_id=worker.spec.agent_id, status=status, error=reason))

    async def _spec_for(self, args: SpawnAgentArgs, queued: bool) -> SpawnedSpec:
        name = nickname(len(self.workers))
        if self.me.spec.depth > 0:  # nicknames are per parent: a grandchild's names its parent
            name = f"{self.me.spec.nickname}/{name}"
        spawn = SpawnSpecInput(
            parent=self.driver.spec,
            request=args.model_dump(mode="json", exclude_none=True),
            nickname=name,
            limits=self.me.limits,
            siblings=tuple(w.spec for w in self.workers.values() if not w.closed),
            queued=queued,
        )
        spawned: SpawnedSpec = await workflow.execute_activity(
            "corral.spawn_spec", spawn, result_type=SpawnedSpec, **self._options()
        )
        return spawned

    async def _send(self, args: SendInputArgs) -> dict[str, Any]:
        if not args.message.strip():
            raise Refused("the message is empty; say what the worker should do")
        worker = self._find(args.target)
        if worker.closed or (worker.handle is not None and worker.handle.done()):
            raise Refused(f"agent {worker.spec.nickname} ({worker.spec.agent_id}) is closed")
        run = self.driver.run
        if run is not None and run.stop is not None:
            raise Refused(no_more_input(worker.spec.nickname, run.stop))
        if worker.queued:  # read once it starts, after its task, as locally
            inbox = (*worker.start.inbox, args.message)
            worker.start = worker.start.model_copy(update={"inbox": inbox})
            return {"delivered": True}
        # Admitted: its workflow is starting, unless the run's budget ended it unstarted.
        await workflow.wait_condition(lambda: worker.handle is not None or worker.final)
        if worker.handle is None:
            raise Refused(f"agent {worker.spec.nickname} ({worker.spec.agent_id}) never started")
        await worker.handle.signal(
            SEND_INPUT_SIGNAL, SendInput(message=args.message, interrupt=args.interrupt)
        )
        worker.status = str(AgentStatus.RUNNING)  # so a `wait` right after sees no stale end
        return {"delivered": True}

    async def _wait(self, args: WaitAgentArgs) -> dict[str, Any]:
        if not args.targets:
            raise Refused("targets is empty; name at least one worker to wait for")
        if args.timeout_ms < 0:
            raise Refused(f"timeout_ms must be 0 or more, not {args.timeout_ms}")
        targets = {w.spec.agent_id: w for w in (self._find(t) for t in args.targets)}
        within = min(args.timeout_ms, WAIT_MAX_MS) / 1000

        def done() -> dict[str, Worker]:
            return {i: w for i, w in targets.items() if w.final}

        if not done() and within > 0:
            try:
                await workflow.wait_condition(lambda: bool(done()), timeout=within)
            except TimeoutError:
                return {"status": {}, "timed_out": True}
        if not done():  # a zero timeout, and nothing done yet
            return {"status": {}, "timed_out": True}
        status = {i: self._status_of(w) for i, w in done().items()}
        return {"status": status, "timed_out": False}

    async def _close(self, args: CloseAgentArgs) -> dict[str, Any]:
        worker = self._find(args.target)
        if worker.closed:
            return {"previous_status": CLOSED}
        previous = worker.label()
        await self._stop([worker])
        await self._journal_closed(worker)
        await self.admit_waiting()
        return {"previous_status": previous}

    # -- what the workflow tells it ---------------------------------------------------------

    def ended(self, ended: AgentOutput) -> None:
        """A worker's turn ended: remember its status, and tell this agent."""
        worker = self.workers.get(ended.agent_id)
        if worker is None or worker.closed:
            return
        worker.status, worker.message = ended.status, ended.message or ended.error
        self.messages.append(
            render_notification(
                agent_id=worker.spec.agent_id,
                nickname=worker.spec.nickname,
                status=ended.status,
                message=worker.message,
            )
        )

    def running(self) -> bool:
        return any(w.running for w in self.workers.values())

    async def stop_all(self) -> None:
        """Cancel every worker still open and wait until each has ended (and journaled)."""
        await self._stop([w for w in self.workers.values() if w.open])

    async def _stop(self, workers: list[Worker]) -> None:
        started = [w.handle for w in workers if w.handle is not None]
        for worker in workers:
            worker.closed = True  # a queued one never starts
        for handle in started:
            handle.cancel()
        results = await asyncio.gather(*started, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not cancelled_error(result):
                workflow.logger.warning("a worker ended with %s while closed", result)

    async def _journal_closed(self, worker: Worker) -> None:
        ended = AgentEndedInput(
            agent_id=worker.spec.agent_id,
            status=CLOSED,
            message=worker.message,
            journal=JournalBatch(agent_id=worker.spec.agent_id, first_seq=1),
        )
        await workflow.execute_activity("corral.agent_ended", ended, **self._options())

    # -- helpers ----------------------------------------------------------------------------

    def _find(self, target: str) -> Worker:
        wanted = target.strip()
        for worker in self.workers.values():
            if wanted in (worker.spec.agent_id, worker.spec.nickname):
                return worker
        if not self.workers:
            listing = "you have no workers yet; start one with spawn_agent"
        else:
            names = ", ".join(
                f"{w.spec.nickname} ({w.spec.agent_id}, {w.label()})" for w in self.workers.values()
            )
            listing = f"your workers are: {names}"
        raise Refused(f"no worker of yours is called {target!r}; {listing}")

    def _status_of(self, worker: Worker) -> dict[str, Any]:
        label, name = worker.label(), worker.spec.nickname
        return {"status": label, "nickname": name, "message": worker.message}

    def _describe(self, worker: Worker) -> dict[str, Any]:
        return {
            "agent_id": worker.spec.agent_id,
            "nickname": worker.spec.nickname,
            "role": worker.spec.role,
            "status": worker.label(),
            "depth": worker.spec.depth,
            "parent": worker.spec.parent_id,
            "task": worker.task[:TASK_PREVIEW_CHARS],
        }

    def _options(self) -> dict[str, Any]:
        policy = self.me.policy
        return {
            "start_to_close_timeout": timedelta(seconds=policy.journal_timeout_s),
            "retry_policy": RetryPolicy(maximum_attempts=policy.journal_attempts),
        }


def _args(model: type[ArgsT], call: FunctionCall) -> ArgsT:
    try:
        return model.model_validate_json(call.arguments or "{}")
    except ValidationError as exc:
        raise Refused(f"invalid arguments for {call.name}: {exc}") from exc


def cancelled_error(error: BaseException) -> bool:
    """Whether `error` says a workflow (or a child of it) was cancelled."""
    if isinstance(error, asyncio.CancelledError | CancelledError):
        return True
    # A cancelled activity or child surfaces as its error, with the cancellation as cause.
    wrapped = isinstance(error, ActivityError | ChildWorkflowError)
    return wrapped and isinstance(error.__cause__, CancelledError)
