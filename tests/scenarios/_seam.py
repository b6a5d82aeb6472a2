"""One face for both executors, so a scenario is written once: `LocalSeam` runs jobs with
`LocalExecutor` and answers asks on the service's approval board; `TemporalSeam` runs them on a
corral worker of the session's time-skipping test server and answers through the agent's
workflow. Neither changes what the run does; they only start it, stop it and answer for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, ExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, overload

import anyio
import pytest
from temporalio.testing import WorkflowEnvironment

from corral.agents import CorralConfig, Store, open_sqlite_store
from corral.orchestrator.fanout import FanoutOutcome
from corral.orchestrator.runs import (
    ExecJob,
    ExecutorKind,
    FanoutJob,
    LocalExecutor,
    RunSetup,
    SingleOutcome,
)
from corral.orchestrator.service._approvals import ApprovalBoard
from corral.orchestrator.temporal import (
    ActivityPolicy,
    TemporalExecutor,
    TemporalRunFailed,
    TemporalSettings,
    WorkerSettings,
    answer_approval,
    run_worker,
)
from corral.tools import ToolServices
from tests.temporal._harness import record

WAIT = 30.0
HOUR = 3600.0
LOCAL_LONG_S = 1.5
"""A deadline a local scenario waits out, in real time: long enough for the asks it answers."""
POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)


EXECUTORS = ("local", "temporal")


def differs_on(kind: ExecutorKind, reason: str) -> pytest.MarkDecorator:
    """Run the scenario on both executors, expecting it to fail on `kind` for `reason` (a
    difference between the executors, reported; strict, so a fix shows)."""
    xfail = pytest.mark.xfail(strict=True, reason=reason)
    params = [pytest.param(k, marks=xfail) if k == kind else k for k in EXECUTORS]
    return pytest.mark.parametrize("executor", params, indirect=True)


@dataclass(frozen=True)
class Ask:
    """An ask for approval as a scenario sees it: the command, and where to answer it."""

    command: str
    approval_id: str
    workflow_id: str = ""


class Seam:
    """What a scenario needs of an executor; see the module docstring."""

    kind: ExecutorKind
    long_s: float
    """A deadline nobody reaches by answering, which the scenario then waits out."""

    def __init__(self) -> None:
        self.asked: list[Ask] = []
        self._news = anyio.Event()

    def run_id(self, name: str) -> str:
        """A run id of the scenario's own (workflow ids outlive a scenario on the server)."""
        return name

    def setup(self, run_id: str, **fields: Any) -> RunSetup:
        return RunSetup(env={}, **fields)

    def serving(self, config: CorralConfig) -> AbstractAsyncContextManager[None]:
        """What carries out runs with `config`, for as long as the scenario runs them."""
        raise NotImplementedError

    @overload
    async def run(self, job: ExecJob, setup: RunSetup, config: CorralConfig) -> SingleOutcome: ...

    @overload
    async def run(self, job: FanoutJob, setup: RunSetup, config: CorralConfig) -> FanoutOutcome: ...

    async def run(
        self, job: ExecJob | FanoutJob, setup: RunSetup, config: CorralConfig
    ) -> SingleOutcome | FanoutOutcome:
        raise NotImplementedError

    async def run_to_cancel(self, job: ExecJob, setup: RunSetup, config: CorralConfig) -> None:
        """Run `job` until `cancel` stops it."""
        raise NotImplementedError

    async def cancel(self, run_id: str) -> None:
        raise NotImplementedError

    async def answer(self, ask: Ask, approve: bool, reason: str) -> None:
        raise NotImplementedError

    def stop_time(self) -> Callable[[], None]:
        """Until the function returned is called, no deadline passes faster than real time,
        so asks can be answered before their hour is up (on the time-skipping server)."""
        return lambda: None

    async def replay(self, run_id: str, name: str) -> None:
        """Replay the run's workflow histories against today's workflow code (Temporal)."""

    def _heard(self, asks: list[Ask]) -> None:
        self.asked += asks
        if asks:
            self._news.set()
            self._news = anyio.Event()

    async def asks(self, count: int) -> list[Ask]:
        """The first `count` asks for approval, once they are in."""
        with anyio.fail_after(WAIT):
            while len(self.asked) < count:
                await self._news.wait()
        return self.asked[:count]


class LocalSeam(Seam):
    kind: ExecutorKind = "local"
    long_s = LOCAL_LONG_S

    def __init__(self) -> None:
        super().__init__()
        self.board = ApprovalBoard()
        self.journal: Store | None = None
        self._scopes: dict[str, anyio.CancelScope] = {}

    @asynccontextmanager
    async def serving(self, config: CorralConfig) -> AsyncIterator[None]:
        async with open_sqlite_store(config.home / "journal.sqlite") as store:
            self.journal = store
            yield

    def setup(self, run_id: str, **fields: Any) -> RunSetup:
        assert self.journal is not None, "setup is called inside serving"
        approver = self.board.approver(run_id, self.journal, self._poke(run_id))
        return RunSetup(env={}, services=ToolServices(approver=approver), **fields)

    def _poke(self, run_id: str) -> Callable[[], None]:
        def poke() -> None:
            known = {a.approval_id for a in self.asked}
            new = [a for a in self.board.pending(run_id) if a.approval_id not in known]
            self._heard([Ask(a.request.command, a.approval_id) for a in new])

        return poke

    async def run(self, job: Any, setup: RunSetup, config: CorralConfig) -> Any:
        return await LocalExecutor().run(job, setup, config)

    async def run_to_cancel(self, job: ExecJob, setup: RunSetup, config: CorralConfig) -> None:
        with anyio.CancelScope() as scope:
            self._scopes[str(job.run_id)] = scope
            await self.run(job, setup, config)

    async def cancel(self, run_id: str) -> None:
        self._scopes[run_id].cancel()

    async def answer(self, ask: Ask, approve: bool, reason: str) -> None:
        self.board.answer(ask.approval_id, approve, reason)


class TemporalSeam(Seam):
    kind: ExecutorKind = "temporal"
    long_s = HOUR

    def __init__(self, env: WorkflowEnvironment, number: int) -> None:
        super().__init__()
        self.env = env
        self.number = number
        self.settings = TemporalSettings(address="test-server", task_queue=f"corral-{number}")
        self.executor = TemporalExecutor(self.settings, POLICY, env.client)
        self._moving = anyio.Event()
        self._moving.set()

    def run_id(self, name: str) -> str:
        return f"{name}-{self.number}"

    @asynccontextmanager
    async def serving(self, config: CorralConfig) -> AsyncIterator[None]:
        settings = WorkerSettings(
            temporal=self.settings,
            host=f"host-{self.number}",
            graceful_shutdown_s=1.0,
            on_journal=self._journaled,
        )
        async with anyio.create_task_group() as tg:

            async def serve(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
                client = self.env.client
                await run_worker(settings, config, env={}, client=client, task_status=task_status)

            with anyio.fail_after(WAIT):
                await tg.start(serve)
            yield
            tg.cancel_scope.cancel()

    def _journaled(self, agent_id: str, events: list[dict[str, Any]]) -> None:
        asked = [e for e in events if e["kind"] == "approval_requested"]
        self._heard([Ask(e["command"], e["approval_id"], e["workflow_id"]) for e in asked])

    async def run(self, job: Any, setup: RunSetup, config: CorralConfig) -> Any:
        if isinstance(job, FanoutJob):
            done = await self.executor.run_fanout(config, job, env=setup.env)
            return done.outcome
        await self.executor.start_single(config, job, setup)
        # Awaiting the outcome lets time skip: not before the scenario has answered its asks.
        await self._moving.wait()
        return await self.executor.run_single(config, job, setup)  # joins the started run

    async def run_to_cancel(self, job: ExecJob, setup: RunSetup, config: CorralConfig) -> None:
        with suppress(TemporalRunFailed):
            await self.run(job, setup, config)

    async def cancel(self, run_id: str) -> None:
        await self.env.client.get_workflow_handle(run_id).cancel()

    async def answer(self, ask: Ask, approve: bool, reason: str) -> None:
        await answer_approval(self.env.client, ask.workflow_id, ask.approval_id, approve, reason)

    def stop_time(self) -> Callable[[], None]:
        stack = ExitStack()
        stack.enter_context(self.env.auto_time_skipping_disabled())
        moving = self._moving = anyio.Event()

        def release() -> None:
            stack.close()
            moving.set()

        return release

    async def replay(self, run_id: str, name: str) -> None:
        await record(self.env.client, run_id, name)
