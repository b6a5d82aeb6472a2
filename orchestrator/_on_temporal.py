"""The `Executor` that hands runs to corral workers of a Temporal server.

A thin adapter over `orchestrator.temporal.TemporalExecutor`: it checks the inputs, makes sure the
server answers before it tells the caller a run has started, and returns the same outcomes as
the local executor. Importing it imports `temporalio`; only `executor_from_settings` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents import CorralConfig

from ._executor import ExecutorKind, ExecutorSettings, NotOnThisExecutor
from ._single import RunSetup, SingleOutcome, new_id
from .fanout import DEFAULT_MAX_RESULT_TRIES, FanoutItem, FanoutOutcome, StartCallback, plan_fanout
from .fanout._plan import check_counts
from .temporal import TemporalExecutor, TemporalSettings, connect, policy_from_config


@dataclass(frozen=True)
class TemporalRunner:
    """Runs fan-outs (and, where this build has them, single runs) on a Temporal server.

    The run's hooks and services stay here: its agents run in the workers, which journal
    what they do, so `corral status` and the service's event streams follow the run.
    """

    settings: TemporalSettings

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> TemporalRunner:
        return cls(
            TemporalSettings(
                address=settings.address,
                namespace=settings.namespace,
                task_queue=settings.task_queue,
            )
        )

    @property
    def kind(self) -> ExecutorKind:
        return "temporal"

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
        max_result_tries: int = DEFAULT_MAX_RESULT_TRIES,
        tools: Sequence[str] | None = None,
        on_start: StartCallback | None = None,
        role: str = "general",
    ) -> FanoutOutcome:
        check_counts(concurrency=concurrency, max_result_tries=max_result_tries)
        total = len(plan_fanout(items, template, schema).items)
        run_id = run_id or new_id("run")
        # Raises at once, naming the address, before the caller announces a run.
        await connect(self.settings)
        if on_start is not None:
            on_start(run_id, total, total)
        done = await self._executor(config).run_fanout(
            config,
            items,
            template,
            schema,
            cwd=cwd,
            concurrency=concurrency,
            run_id=run_id,
            out=out,
            max_result_tries=max_result_tries,
            tools=tools,
            role=role,
            env=setup.env,
        )
        return done.outcome

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
        executor = self._executor(config)
        # Single runs on Temporal arrive with a later build of `orchestrator.temporal`.
        run = getattr(executor, "run_single", None)
        if run is None:
            raise NotOnThisExecutor(
                "exec runs on Temporal are not available in this build; use --executor local"
            )
        done = await run(config, task, cwd=cwd, run_id=run_id, role=role, env=setup.env)
        outcome: SingleOutcome = getattr(done, "outcome", done)
        return outcome

    def _executor(self, config: CorralConfig) -> TemporalExecutor:
        return TemporalExecutor(self.settings, policy=policy_from_config(config))
