"""The `Executor` that hands runs to corral workers of a Temporal server.

A thin adapter over `orchestrator.temporal.TemporalExecutor`: it checks the inputs, makes sure the
server answers before it tells the caller a run has started, and returns the same outcomes as
the local executor. It cancels a run by cancelling its workflow, and shows and answers the
approvals its agents' workflows hold (`_asks` maps them to the service's JSON).
Importing it imports `temporalio`; only `executor_from_settings` does.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import anyio
from opentelemetry.trace import TracerProvider
from temporalio.client import Client, WorkflowFailureError, WorkflowQueryFailedError
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from corral.agents import CorralConfig, Store

from ..fanout import FanoutOutcome, plan_fanout
from ..runs import (
    ApprovalRefused,
    ExecJob,
    ExecutorKind,
    ExecutorSettings,
    FanoutJob,
    JobDispatch,
    RunSetup,
    SingleOutcome,
    UnknownRunApproval,
    new_id,
)
from ._agent_workflow import RunWorkflow
from ._approvals import ApprovalRejected, answer_approval, pending_approvals
from ._asks import Ask, journaled_asks, split_approval_id
from ._connect import TemporalSettings, connect
from ._errors import TemporalRunFailed
from ._executor import TemporalExecutor, policy_from_config, single_outcome
from ._tracing import run_span
from ._wire import ExecOutput

JobT = TypeVar("JobT", ExecJob, FanoutJob)
BLOBS = "blobs"
"""The folder under `$CORRAL_HOME` that holds payloads too big to travel through Temporal."""
TELEMETRY_GRACE = 15.0


@dataclass(frozen=True)
class TemporalRunner(JobDispatch):
    """Runs fan-outs (and, where this build has them, single runs) on a Temporal server.

    The run's hooks and services stay here: its agents run in the workers, which journal
    what they do, so `corral status` and the service's event streams follow the run.
    """

    settings: TemporalSettings
    answered: dict[str, Ask] = field(default_factory=dict, compare=False, repr=False)
    """Asks answered through this runner, by API id: shown answered before the agent's
    workflow has journaled the answer."""

    _connected: list[Client] = field(default_factory=list, compare=False, repr=False)
    """The connection cancels and approvals reuse (the service asks for them often)."""

    async def _client(self) -> Client:
        if not self._connected:
            self._connected.append(await connect(self.settings))
        return self._connected[0]

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> TemporalRunner:
        return cls(
            TemporalSettings(
                address=settings.address,
                namespace=settings.namespace,
                task_queue=settings.task_queue,
                journal_url=settings.journal_url,
            )
        )

    @property
    def kind(self) -> ExecutorKind:
        return "temporal"

    async def run_fanout(
        self, job: FanoutJob, setup: RunSetup, config: CorralConfig
    ) -> FanoutOutcome:
        job = _with_run_id(job)
        total = len(plan_fanout(job.items, job.template, job.result_schema).items)
        run_id = str(job.run_id)
        # Connecting raises at once, naming the address, before the caller announces a run.
        async with self._executor(config, setup, run_id) as executor:
            if setup.on_start is not None:
                setup.on_start(run_id, total, total)
            done = await executor.run_fanout(config, job, env=setup.env)
        return done.outcome

    async def run_exec(self, job: ExecJob, setup: RunSetup, config: CorralConfig) -> SingleOutcome:
        job = _with_run_id(job)
        run_id = str(job.run_id)
        try:
            async with self._executor(config, setup, run_id) as executor:
                return await executor.run_single(config, job, setup)
        except WorkflowAlreadyStartedError:
            # The run's workflow ended while nobody waited (a restarted service): its outcome
            # stands, and running the agent again would do its work twice.
            return await self._ended_single(config, run_id)

    async def _ended_single(self, config: CorralConfig, run_id: str) -> SingleOutcome:
        client = await self._client()
        handle = client.get_workflow_handle_for(RunWorkflow.run, run_id)
        try:
            output: ExecOutput = await handle.result()
        except (WorkflowFailureError, RPCError) as exc:
            raise TemporalRunFailed(
                f"run {run_id} ended on Temporal ({self.settings.address}) without an outcome: "
                f"{exc}; `corral status` shows what its agents journaled"
            ) from exc
        return single_outcome(output, config)

    async def cancel(self, run_id: str) -> None:
        """Cancel the run's workflow; Temporal carries the cancel to every child workflow."""
        client = await self._client()
        try:
            await client.get_workflow_handle(run_id).cancel()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:  # never started, or long gone
                return
            raise TemporalRunFailed(
                f"run {run_id} could not be cancelled on Temporal ({self.settings.address}): "
                f"{exc.message}"
            ) from exc

    async def approvals(self, run_id: str, journal: Store) -> list[dict[str, Any]]:
        asks = [
            self.answered.get(a.id, a) if a.answer is None else a
            for a in await journaled_asks(journal, run_id)
        ]
        waiting = {ask.workflow_id for ask in asks if ask.answer is None}
        if not waiting:
            return [ask.to_json() for ask in asks]
        client = await self._client()
        pending: set[str] = set()
        for workflow_id in sorted(waiting):
            pending |= await _pending_ids(client, workflow_id)
        return [ask.to_json(pending=ask.id in pending) for ask in asks]

    async def answer(
        self, approval_id: str, *, approve: bool, reason: str | None, journal: Store
    ) -> dict[str, Any]:
        ask = await _find_ask(journal, approval_id)
        client = await self._client()
        try:
            answer = await answer_approval(
                client, ask.workflow_id, ask.approval_id, approve, reason or ""
            )
        except ApprovalRejected as exc:
            raise ApprovalRefused(str(exc)) from exc
        shown = self.answered[approval_id] = ask.answered(answer.approve, answer.reason, answer.who)
        return shown.to_json()

    @asynccontextmanager
    async def _executor(
        self, config: CorralConfig, setup: RunSetup, run_id: str
    ) -> AsyncIterator[TemporalExecutor]:
        """An executor for one run: payloads by reference in the run's home, and with telemetry
        on, the run's root span, under which its workflows and activities trace."""
        settings = replace(
            self.settings,
            blob_dir=config.home / BLOBS,
            payload_threshold_bytes=config.temporal.payload_threshold_bytes,
            journal_url=config.journal.url,
        )
        policy = policy_from_config(config)
        async with _run_trace(config, setup, run_id) as provider:
            client = await connect(settings, tracer_provider=provider)
            yield TemporalExecutor(settings, policy=policy, client=client)


@asynccontextmanager
async def _run_trace(
    config: CorralConfig, setup: RunSetup, run_id: str
) -> AsyncIterator[TracerProvider | None]:
    """The run's tracer provider inside its root span, when config or environment ask for
    telemetry (as a local run's `open_observability` does); flushed when the run ends."""
    from corral.observability import build_telemetry, telemetry_settings

    settings = telemetry_settings(config.otel, os.environ if setup.env is None else setup.env)
    telemetry = build_telemetry(settings) if settings.enabled else None
    provider = telemetry.tracer_provider if telemetry is not None else None
    try:
        if provider is None:
            yield None
        else:
            with run_span(provider, run_id):
                yield provider
    finally:
        if telemetry is not None:
            with anyio.move_on_after(TELEMETRY_GRACE, shield=True):
                await anyio.to_thread.run_sync(telemetry.shutdown, abandon_on_cancel=True)


async def _pending_ids(client: Client, workflow_id: str) -> set[str]:
    """The API ids of the asks `workflow_id` still waits on; none once it cannot be asked
    (the workflow ended, or no worker answers its query)."""
    try:
        asks = await pending_approvals(client, workflow_id)
    except (RPCError, WorkflowQueryFailedError):
        return set()
    return {Ask.api_id(workflow_id, ask.approval_id) for ask in asks}


async def _find_ask(journal: Store, approval_id: str) -> Ask:
    """The journaled ask `approval_id` names; `UnknownRunApproval` when no run has it."""
    for run_id in split_approval_id(approval_id):
        if await journal.get_run(run_id) is None:
            continue
        for ask in await journaled_asks(journal, run_id):
            if ask.id == approval_id:
                return ask
        raise ApprovalRefused(f"run {run_id} has asked for no approval {approval_id}")
    raise UnknownRunApproval(f"no approval {approval_id} in any run on Temporal")


def _with_run_id(job: JobT) -> JobT:
    """The job with its run's id: the workflow's, chosen here when the job names none."""
    return job.model_copy(update={"run_id": job.run_id or new_id("run")})
