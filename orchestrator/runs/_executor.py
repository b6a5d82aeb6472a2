"""Where a run's agents execute: the `Executor` seam, its local default and how one is chosen.

`LocalExecutor` runs agents in this process (the anyio runtime); the Temporal one, built by
`executor_from_settings` only when asked for, hands runs to corral workers of a Temporal server
(`_on_temporal`, which needs the optional `corral[temporal]` extra). `run_fanout` and
`run_single_agent` dispatch to `RunSetup.executor`, so every pipeline built on them follows.
A service asks the executor to cancel a run and, for runs not in this process, for their
approvals (`approvals`, `answer`), so runs on Temporal are cancelled and approved like local ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from corral.agents import CorralConfig, Store

from ._settings import (
    INSTALL_HINT,
    ExecutorKind,
    ExecutorSettings,
    ExecutorSettingsError,
    NotOnThisExecutor,
    UnknownRunApproval,
)
from ._setup import Handoff, RunSetup
from ._single import SingleOutcome, run_single_agent

if TYPE_CHECKING:
    from ..fanout import FanoutItem, FanoutOutcome, StartCallback


class Executor(Protocol):
    """Carries out runs; both run methods take what the local functions of the same name take.

    `cancel`, `approvals` and `answer` serve runs that execute elsewhere; the local executor's
    runs are cancelled through their own scope and approved through the service's board.
    Approvals are the service's JSON: `id`, `run_id`, `agent_id`, `tool`, `command`, `cwd`,
    `reason`, `kind`, `state`, `created_at`, `deadline`, `decision_reason`, `answered_by`.
    """

    @property
    def kind(self) -> ExecutorKind: ...

    async def run_fanout(
        self,
        config: CorralConfig,
        items: Sequence[FanoutItem] | Sequence[Mapping[str, Any]],
        template: str,
        schema: Any,
        *,
        cwd: Path,
        setup: RunSetup,
        concurrency: int | None = None,
        run_id: str | None = None,
        out: Path | str | None = None,
        max_result_tries: int = 3,
        tools: Sequence[str] | None = None,
        on_start: StartCallback | None = None,
        role: str = "general",
    ) -> FanoutOutcome: ...

    async def run_single(
        self,
        config: CorralConfig,
        task: str,
        *,
        cwd: Path,
        setup: RunSetup,
        run_id: str | None = None,
        role: str = "general",
    ) -> SingleOutcome: ...

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


@dataclass(frozen=True)
class LocalExecutor:
    """Runs agents in this process: the default, and what a `RunSetup` without one gets."""

    @property
    def kind(self) -> ExecutorKind:
        return "local"

    async def run_fanout(
        self,
        config: CorralConfig,
        items: Sequence[FanoutItem] | Sequence[Mapping[str, Any]],
        template: str,
        schema: Any,
        *,
        cwd: Path,
        setup: RunSetup,
        concurrency: int | None = None,
        run_id: str | None = None,
        out: Path | str | None = None,
        max_result_tries: int = 3,
        tools: Sequence[str] | None = None,
        on_start: StartCallback | None = None,
        role: str = "general",
    ) -> FanoutOutcome:
        from ..fanout import run_fanout  # the engines sit above this package

        # `run_fanout` dispatches only to executors that are not local, so this cannot loop.
        return await run_fanout(
            config,
            items,
            template,
            schema,
            cwd=cwd,
            setup=setup,
            concurrency=concurrency,
            run_id=run_id,
            out=out,
            max_result_tries=max_result_tries,
            tools=tools,
            on_start=on_start,
            role=role,
        )

    async def run_single(
        self,
        config: CorralConfig,
        task: str,
        *,
        cwd: Path,
        setup: RunSetup,
        run_id: str | None = None,
        role: str = "general",
    ) -> SingleOutcome:
        return await run_single_agent(config, task, cwd=cwd, setup=setup, run_id=run_id, role=role)

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


def refuse_remote(chosen: Handoff | ExecutorSettings | None, what: str, why: str) -> None:
    """Raise `NotOnThisExecutor` unless `chosen` is local (or none): `what` cannot run there,
    because `why`."""
    if chosen is not None and chosen.kind != "local":
        raise NotOnThisExecutor(
            f"{what} cannot run with --executor {chosen.kind}: {why}; use --executor local"
        )
