"""Where a run's agents execute: the `Executor` seam, its local default and how one is chosen.

`Executor.run(job, setup, config)` is the one way a job starts. `LocalExecutor` runs it in this
process (the anyio runtime); the Temporal one, built by `executor_from_settings` only when asked
for, hands it to corral workers of a Temporal server (`temporal._runner`, which needs the
optional `corral[temporal]` extra). The pipelines run their fan-outs on `RunSetup.executor`.
A service asks the executor to cancel a run and, for runs not in this process, for their
approvals (`approvals`, `answer`), so runs on Temporal are cancelled and approved like local ones.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, overload

from corral.agents import CorralConfig, Store

from ._jobs import ExecJob, FanoutJob
from ._pipeline_jobs import RefactorJob, ReviewJob, TriageJob
from ._settings import (
    INSTALL_HINT,
    ExecutorKind,
    ExecutorSettings,
    ExecutorSettingsError,
    NotOnThisExecutor,
    UnknownRunApproval,
)
from ._setup import RunSetup
from ._single import SingleOutcome, run_single_agent

if TYPE_CHECKING:
    from ..fanout import FanoutOutcome
    from ..pipelines.refactor import RefactorOutcome
    from ..pipelines.review import ReviewReport
    from ..pipelines.triage import TriageOutcome

    Outcome: TypeAlias = (
        SingleOutcome | FanoutOutcome | ReviewReport | RefactorOutcome | TriageOutcome
    )

AnyJob = ExecJob | FanoutJob | ReviewJob | RefactorJob | TriageJob
PipelineJob = ReviewJob | RefactorJob | TriageJob


class Executor(Protocol):
    """Carries out jobs: `run` is the only way one starts, here or elsewhere.

    `cancel`, `approvals` and `answer` serve runs that execute elsewhere; the local executor's
    runs are cancelled through their own scope and approved through the service's board.
    Approvals are the service's JSON: `id`, `run_id`, `agent_id`, `tool`, `command`, `cwd`,
    `reason`, `kind`, `state`, `created_at`, `deadline`, `decision_reason`, `answered_by`.
    """

    @property
    def kind(self) -> ExecutorKind: ...

    @overload
    async def run(self, job: ExecJob, setup: RunSetup, config: CorralConfig) -> SingleOutcome: ...

    @overload
    async def run(self, job: FanoutJob, setup: RunSetup, config: CorralConfig) -> FanoutOutcome: ...

    @overload
    async def run(self, job: ReviewJob, setup: RunSetup, config: CorralConfig) -> ReviewReport: ...

    @overload
    async def run(
        self, job: RefactorJob, setup: RunSetup, config: CorralConfig
    ) -> RefactorOutcome: ...

    @overload
    async def run(self, job: TriageJob, setup: RunSetup, config: CorralConfig) -> TriageOutcome: ...

    async def run(self, job: AnyJob, setup: RunSetup, config: CorralConfig) -> Outcome:
        """Carry out `job` with `config`, opening its run as `setup` says; wait for its end."""
        ...

    async def cancel(self, run_id: str) -> None:
        """Cancel run `run_id` where it executes, with every agent below it."""
        ...

    async def approvals(self, run_id: str, journal: Store) -> list[dict[str, Any]]:
        """The run's approvals, oldest first, from its journal and where it executes."""
        ...

    async def answer(
        self, approval_id: str, *, approve: bool, reason: str | None, journal: Store
    ) -> dict[str, Any]:
        """Answer a pending approval and show it answered; `UnknownRunApproval` when no
        journaled run has it, `ApprovalRefused` when it takes no answer."""
        ...


class JobDispatch:
    """The one `run` every executor shares: the job's kind chooses the executor's engine
    (`run_exec`, `run_fanout`) or the pipeline, so no executor writes its own dispatch."""

    @overload
    async def run(self, job: ExecJob, setup: RunSetup, config: CorralConfig) -> SingleOutcome: ...

    @overload
    async def run(self, job: FanoutJob, setup: RunSetup, config: CorralConfig) -> FanoutOutcome: ...

    @overload
    async def run(self, job: ReviewJob, setup: RunSetup, config: CorralConfig) -> ReviewReport: ...

    @overload
    async def run(
        self, job: RefactorJob, setup: RunSetup, config: CorralConfig
    ) -> RefactorOutcome: ...

    @overload
    async def run(self, job: TriageJob, setup: RunSetup, config: CorralConfig) -> TriageOutcome: ...

    async def run(self, job: AnyJob, setup: RunSetup, config: CorralConfig) -> Outcome:
        if isinstance(job, ExecJob):
            return await self.run_exec(job, setup, config)
        if isinstance(job, FanoutJob):
            return await self.run_fanout(job, setup, config)
        # A pipeline runs here whatever the executor; its fan-outs go to this one.
        return await run_pipeline_job(job, replace(setup, executor=self), config)

    async def run_exec(self, job: ExecJob, setup: RunSetup, config: CorralConfig) -> SingleOutcome:
        raise NotImplementedError

    # The rest of `Executor`, each executor's own.
    @property
    def kind(self) -> ExecutorKind:
        raise NotImplementedError

    async def cancel(self, run_id: str) -> None:
        raise NotImplementedError

    async def approvals(self, run_id: str, journal: Store) -> list[dict[str, Any]]:
        raise NotImplementedError

    async def answer(
        self, approval_id: str, *, approve: bool, reason: str | None, journal: Store
    ) -> dict[str, Any]:
        raise NotImplementedError

    async def run_fanout(
        self, job: FanoutJob, setup: RunSetup, config: CorralConfig
    ) -> FanoutOutcome:
        raise NotImplementedError


@dataclass(frozen=True)
class LocalExecutor(JobDispatch):
    """Runs agents in this process: the default, and what a `RunSetup` without one gets."""

    @property
    def kind(self) -> ExecutorKind:
        return "local"

    async def run_exec(self, job: ExecJob, setup: RunSetup, config: CorralConfig) -> SingleOutcome:
        return await run_single_agent(config, job, setup)

    async def run_fanout(
        self, job: FanoutJob, setup: RunSetup, config: CorralConfig
    ) -> FanoutOutcome:
        from ..fanout import run_fanout  # the fan-out's engine sits above this package

        return await run_fanout(config, job, setup)

    async def cancel(self, run_id: str) -> None:
        """Nothing to do here: a local run stops when its caller cancels the scope it runs in."""

    async def approvals(self, run_id: str, journal: Store) -> list[dict[str, Any]]:
        return []

    async def answer(
        self, approval_id: str, *, approve: bool, reason: str | None, journal: Store
    ) -> dict[str, Any]:
        raise UnknownRunApproval(
            f"no approval {approval_id}: a local run's approvals are answered where it runs"
        )


async def run_pipeline_job(
    job: PipelineJob, setup: RunSetup, config: CorralConfig
) -> ReviewReport | RefactorOutcome | TriageOutcome:
    """A pipeline's job, run here; its fan-outs go to `setup.executor`. The pipelines sit
    above this package, so each is imported when its job comes."""
    if isinstance(job, ReviewJob):
        from ..pipelines.review import run_review

        return await run_review(config, job, setup=setup)
    if isinstance(job, RefactorJob):
        from ..pipelines.refactor import run_refactor

        return await run_refactor(config, job, setup=setup)
    from ..pipelines.triage import run_triage

    return await run_triage(config, job, setup=setup)


def executor_of(setup: RunSetup) -> Executor:
    """The executor `setup` names, or the local one."""
    return setup.executor if setup.executor is not None else LocalExecutor()


def executor_from_settings(settings: ExecutorSettings) -> Executor:
    """The executor `settings` ask for; Temporal's SDK is imported only when it is Temporal."""
    if settings.kind == "local":
        return LocalExecutor()
    try:
        from ..temporal._runner import TemporalRunner
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "temporalio":
            raise
        raise ExecutorSettingsError(
            f"--executor temporal needs Temporal's SDK, which is not installed: {INSTALL_HINT} "
            "(or run with --executor local)"
        ) from exc
    return TemporalRunner.from_settings(settings)


def refuse_remote(chosen: Executor | ExecutorSettings | None, what: str, why: str) -> None:
    """Raise `NotOnThisExecutor` unless `chosen` is local (or none): `what` cannot run there,
    because `why`."""
    if chosen is not None and chosen.kind != "local":
        raise NotOnThisExecutor(
            f"{what} cannot run with --executor {chosen.kind}: {why}; use --executor local"
        )
