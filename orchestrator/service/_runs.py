"""The runs the server executes: admission control, idempotency, cancel, and their task group.

`RunManager` is the one long-lived component that owns the runs: `run()` holds the task group
every run executes in, so no run outlives the server. Each run calls the same functions as the
CLI (`run_single_agent`, `run_fanout`); its state is read from the journal, and this module only
keeps what the journal cannot know: that a run is still queued, was cancelled, or crashed.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from agents import CorralConfig, RunnerHooks, Store, load_config
from tools import CorralError

from .._single import RunSetup, new_id
from ..fanout import plan_fanout
from ._errors import QueueFull, RunRejected
from ._events import EventLog
from ._execute import ServiceRequest, execute
from ._models import FanoutRequest

logger = logging.getLogger(__name__)

CLEANUP_TIMEOUT = 10.0
QUEUED, RUNNING, CANCELLED, FAILED = "queued", "running", "cancelled", "failed"


@dataclass(frozen=True)
class ServiceLimits:
    max_running: int = 4
    """Runs executing at once."""
    max_queued: int = 16
    """Runs waiting for a slot; one more is refused with 429."""
    retry_after: int = 5
    """Seconds a refused client is told to wait (`Retry-After`)."""


@dataclass
class RunEntry:
    """A run submitted to this server."""

    run_id: str
    request: ServiceRequest
    config: CorralConfig
    cwd: Path
    status: str = QUEUED
    """`queued`, `running`, or a final word the journal cannot say: `cancelled`, `failed`."""
    error: str | None = None
    created_at: float = field(default_factory=time.time)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    log: EventLog = field(default_factory=EventLog)
    finished: bool = False


class _PokeHooks(RunnerHooks):
    """Tells the run's tailer that an event was journaled, so streams follow with no delay."""

    def __init__(self, log: EventLog) -> None:
        self._log = log

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        self._log.poke()


class RunManager:
    """Admits, executes and cancels runs; `run()` must be started before `submit`."""

    def __init__(
        self, store: Store, *, env: Mapping[str, str] | None = None, limits: ServiceLimits
    ) -> None:
        self.store = store
        self.limits = limits
        self._env = os.environ if env is None else env
        self._slots = anyio.Semaphore(max(1, limits.max_running))
        self._runs: dict[str, RunEntry] = {}
        self._keys: dict[str, str] = {}
        self._tg: TaskGroup | None = None

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                self._tg = None
                for entry in self._runs.values():
                    entry.log.finish({"status": "interrupted", "error": "the server stopped"})

    def get(self, run_id: str) -> RunEntry | None:
        return self._runs.get(run_id)

    @property
    def entries(self) -> list[RunEntry]:
        return list(self._runs.values())

    async def submit(self, request: ServiceRequest, key: str | None) -> RunEntry:
        """Admit a run (or return the one submitted with the same `Idempotency-Key`)."""
        if key is not None and key in self._keys:
            return self._runs[self._keys[key]]
        self._admit()
        entry = await self._prepare(request)
        if key is not None and key in self._keys:  # the same key arrived while we prepared
            return self._runs[self._keys[key]]
        if self._tg is None:
            raise RunRejected("the server is shutting down; submit the run again later")
        self._runs[entry.run_id] = entry
        if key is not None:
            self._keys[key] = entry.run_id
        self._tg.start_soon(self._execute, entry, name=f"run {entry.run_id}")
        return entry

    def cancel(self, run_id: str) -> RunEntry | None:
        entry = self._runs.get(run_id)
        if entry is not None and not entry.finished:
            entry.status = CANCELLED
            entry.scope.cancel()
        return entry

    def _admit(self) -> None:
        waiting = sum(1 for e in self._runs.values() if e.status == QUEUED)
        running = sum(1 for e in self._runs.values() if e.status == RUNNING)
        free = max(0, self.limits.max_running - running)
        if waiting >= self.limits.max_queued + free:
            raise QueueFull(
                f"{running} runs are running and {waiting} waiting, the most this server "
                f"allows; retry in {self.limits.retry_after} s",
                self.limits.retry_after,
            )

    async def _prepare(self, request: ServiceRequest) -> RunEntry:
        run_id = request.run_id or new_id("run")
        if run_id in self._runs or await self.store.get_run(run_id) is not None:
            raise RunRejected(f"run id {run_id!r} is taken; choose another or leave it out")
        config, cwd = await anyio.to_thread.run_sync(self._resolve, request)
        return RunEntry(run_id, request, config, cwd)

    def _resolve(self, request: ServiceRequest) -> tuple[CorralConfig, Path]:
        """The run's folder and config, and its fan-out inputs checked; `InvalidInput` if bad."""
        cwd = Path(request.cd).expanduser() if request.cd else Path.cwd()
        if not cwd.is_dir():
            raise RunRejected(f"cd {str(cwd)!r} is not a directory on the server")
        if isinstance(request, FanoutRequest):
            plan_fanout(request.items, request.template, request.result_schema)
        overrides = {
            "model": request.model,
            "base_url": request.base_url,
            "model_provider_api": request.api,
            "sandbox_mode": request.sandbox,
        }
        loaded = load_config(
            cwd=cwd.resolve(), env=self._env, overrides=overrides, cli_settings=request.config
        )
        return loaded.config, cwd.resolve()

    async def _execute(self, entry: RunEntry) -> None:
        try:
            with entry.scope:
                async with self._slots:
                    entry.status = RUNNING
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(entry.log.follow, self.store, entry.run_id, _ended(entry))
                        try:
                            await self._work(entry)
                        finally:
                            entry.finished = True
                            entry.log.poke()
        except Exception as exc:  # the one boundary: a run's crash must not stop the server
            logger.exception("run %s failed", entry.run_id)
            entry.status, entry.error = FAILED, _describe(exc)
        finally:
            entry.finished = True
            with anyio.move_on_after(CLEANUP_TIMEOUT, shield=True):
                await self._settle(entry)

    async def _work(self, entry: RunEntry) -> None:
        setup = RunSetup(hooks=_PokeHooks(entry.log), env=self._env)
        await execute(
            entry.request, config=entry.config, cwd=entry.cwd, setup=setup, run_id=entry.run_id
        )

    async def _settle(self, entry: RunEntry) -> None:
        """Leave the journal consistent: a run stopped mid-way is `interrupted`, not `running`."""
        record = await self.store.get_run(entry.run_id)
        if record is not None and record.status in (RUNNING, QUEUED):
            final = "interrupted" if entry.status == CANCELLED else FAILED
            await self.store.update_run(entry.run_id, status=final, updated_at=time.time())
        await entry.log.read_round(self.store, entry.run_id)
        ending: dict[str, Any] = {"status": await self.status_of(entry)}
        if entry.error is not None:
            ending["error"] = entry.error
        entry.log.finish(ending)

    async def status_of(self, entry: RunEntry) -> str:
        """What a client is told: the service's word while queued or when it stopped the run."""
        if entry.status in (QUEUED, CANCELLED, FAILED):
            return entry.status
        record = await self.store.get_run(entry.run_id)
        return record.status if record is not None else entry.status


def _ended(entry: RunEntry) -> Callable[[], bool]:
    return lambda: entry.finished


def _describe(exc: Exception) -> str:
    if isinstance(exc, CorralError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
