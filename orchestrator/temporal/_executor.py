"""`TemporalExecutor`: fan-outs and exec runs carried out by corral workers on Temporal.

It takes the same jobs as the local engines and checks them the same way (`prepare_fanout`) before
anything starts; then it connects (failing at once if no server answers), starts the run's
workflow under the run id, waits for it, and writes the results file where the caller is.
The journal is written by the workers, so `corral status` and `corral trace` show the run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.service import RPCError

from corral.agents import AgentStatus, CorralConfig, Finish, ItemRecord, journal_target
from corral.agents._store import describe_journal

from ..fanout import STDOUT, FanoutOutcome, ItemOutcome
from ..fanout._outcome import write_results
from ..fanout._plan import prepare_fanout
from ..runs import ExecJob, FanoutJob, RunSetup, SingleOutcome, new_id
from ..supervisor import collab_tool_providers
from ._agent_workflow import RunWorkflow
from ._connect import TemporalSettings, connect
from ._errors import TemporalRunFailed
from ._exec import exec_input
from ._wire import ActivityPolicy, ExecOutput, FanoutRunInput, ItemResult, RunLimits, RunOutput
from ._workflows import FanoutWorkflow


@dataclass(frozen=True)
class TemporalOutcome:
    """The fan-out's outcome, and where each item ran (host queues, restarts)."""

    outcome: FanoutOutcome
    placements: tuple[ItemResult, ...]


TEMPORAL_MODEL_ATTEMPTS = 5


def policy_from_config(config: CorralConfig) -> ActivityPolicy:
    """Activity retries and timeouts from corral's settings."""
    idle = config.stream_idle_timeout_ms / 1000
    return ActivityPolicy(
        # The model client inside the activity retries until its own deadline; the activity's
        # attempts only cover a worker lost mid-call.
        model_attempts=config.request_attempts or TEMPORAL_MODEL_ATTEMPTS,
        model_timeout_s=max(600.0, idle * (config.stream_max_retries + 1)),
    )


def run_limits_of(config: CorralConfig) -> RunLimits:
    """The run-wide budgets (`[budgets] run_*`) the run's workflow keeps."""
    fields = RunLimits.model_fields
    return RunLimits(**config.budgets.model_dump(include=set(fields)))


@dataclass(frozen=True)
class TemporalExecutor:
    """Runs fan-outs on the Temporal server `settings` names."""

    settings: TemporalSettings
    policy: ActivityPolicy | None = None
    client: Client | None = None
    """A client already connected (one per process, or a test server's); else each run
    connects to `settings.address`."""

    async def _client(self) -> Client:
        return self.client if self.client is not None else await connect(self.settings)

    async def run_fanout(
        self, config: CorralConfig, job: FanoutJob, env: Mapping[str, str] | None = None
    ) -> TemporalOutcome:
        """`job` on Temporal, checked as a local fan-out checks it; raises `TemporalUnavailable`
        if no server answers and `TemporalRunFailed` if the run's workflow fails."""
        ready = prepare_fanout(config, job, os.environ if env is None else env)
        settings = ready.settings
        run = FanoutRunInput(
            run_id=ready.run_id,
            settings=settings.model_dump(mode="json"),
            items=tuple(item.data for item in ready.plan.items),
            concurrency=settings.concurrency,
            policy=self.policy or policy_from_config(config),
            run_limits=run_limits_of(config),
            kind=job.run_kind,
        )
        output = await self._carry_out(run)
        return await _outcome(config, output, settings.out)

    async def start_single(
        self, config: CorralConfig, job: ExecJob, setup: RunSetup | None = None
    ) -> WorkflowHandle[Any, ExecOutput]:
        """Start an exec run's workflow and answer its handle (for a caller that cancels it,
        answers its approvals, or reads its history). Without `setup`, a supervisor gets the
        collab tools (as `corral exec --role supervisor` gives them)."""
        if setup is None:
            tools = collab_tool_providers() if job.role == "supervisor" else {}
            setup = RunSetup(tool_providers=tools)
        run_id = job.run_id or new_id("run")
        policy = self.policy or policy_from_config(config)
        run = exec_input(
            config, job.model_copy(update={"run_id": run_id}), setup=setup, policy=policy
        ).model_copy(update={"run_limits": run_limits_of(config)})
        client = await self._client()
        return await client.start_workflow(
            RunWorkflow.run,
            run,
            id=run_id,
            task_queue=self.settings.task_queue,
            # A running run is joined (a restarted service waits for it again); an ended one
            # is refused, since its root agent would run twice: its outcome is read instead.
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        )

    async def run_single(
        self, config: CorralConfig, job: ExecJob, setup: RunSetup | None = None
    ) -> SingleOutcome:
        """`job` on Temporal: the root agent (and the workers it spawns) run on corral
        workers. Approvals are answered through `answer_approval`, not `setup.services`;
        `setup.hooks` see nothing of a run on Temporal; `setup.on_start` hears once its workflow
        has started."""
        handle = await self.start_single(config, job, setup)
        if setup is not None and setup.on_start is not None:
            setup.on_start(handle.id, 1, 1)  # its workflow started: the run's id now names it
        try:
            output = await handle.result()
        except (WorkflowFailureError, RPCError) as exc:
            raise TemporalRunFailed(
                f"run {handle.id} failed on Temporal ({self.settings.address}): "
                f"{_root_cause(exc)}; `corral status` shows what its agents journaled"
            ) from exc
        return single_outcome(output, config)

    async def _carry_out(self, run: FanoutRunInput) -> RunOutput:
        client = await self._client()
        try:
            return await client.execute_workflow(
                FanoutWorkflow.run,
                run,
                id=run.run_id,
                task_queue=self.settings.task_queue,
                # A running run is joined; an ended one runs again, finds every item journaled
                # done and ends at once, or carries on the items it had not finished.
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            )
        except (WorkflowFailureError, RPCError) as exc:
            raise TemporalRunFailed(
                f"run {run.run_id} failed on Temporal ({self.settings.address}): "
                f"{_root_cause(exc)}; "
                "`corral status` shows what its workers journaled"
            ) from exc


async def _outcome(config: CorralConfig, output: RunOutput, out: str | None) -> TemporalOutcome:
    records = [ItemRecord.model_validate(r) for r in output.records]
    path = Path(out) if out is not None and out != STDOUT else None
    outcome = FanoutOutcome(
        run_id=output.run_id,
        items=tuple(ItemOutcome.from_record(r) for r in records),
        journal=describe_journal(journal_target(config)),
        out=path,
        to_stdout=out == STDOUT,
    )
    if path is not None:
        await anyio.to_thread.run_sync(write_results, outcome.lines(), path, output.run_id)
    return TemporalOutcome(outcome=outcome, placements=output.items)


def _root_cause(exc: BaseException) -> str:
    """The innermost message of a chain like workflow -> child -> activity -> its error."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return str(exc) or type(exc).__name__


def single_outcome(output: ExecOutput, config: CorralConfig) -> SingleOutcome:
    """What an exec run's workflow ended with, as a local run reports it."""
    root = output.root
    finish = Finish(status=AgentStatus(root.status), message=root.message, error=root.error)
    journal = describe_journal(journal_target(config))  # the workers write where the config says
    return SingleOutcome(output.run_id, root.agent_id, finish, journal)
