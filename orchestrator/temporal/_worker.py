"""`run_worker`: one corral worker process on Temporal, hosting workflows and activities.

It polls two task queues: the shared one (workflows, model calls, journal writes) and its own
host queue (`corral-host-<name>`: preparing agents and running their tools, where their
workspace is). Cancelling `run_worker` (SIGTERM in `corral worker`) shuts both pollers down
gracefully: no new work is taken, and running activities get `graceful_shutdown_s` to finish.
Workers trace as `[otel]` and the OTEL_* variables say, continuing each run's trace, keep
large payloads in the blob store of their config's `$CORRAL_HOME`, and start the MCP servers of
its `[mcp_servers]` before they poll (stopping them when they stop).
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import anyio
import anyio.to_thread
from opentelemetry.trace import TracerProvider
from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.worker import Interceptor, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from corral.agents import CorralConfig

from ._activities import CorralActivities
from ._agent_workflow import AgentWorkflow, RunWorkflow
from ._codec import BLOBS_DIR
from ._connect import TemporalSettings, connect
from ._services import JournalObserver, open_worker_services
from ._tracing import CorralTracingInterceptor
from ._wire import host_queue
from ._workflows import FanoutWorkflow, ItemWorkflow

SHUTDOWN_TIMEOUT = 30.0
WORKFLOWS = (FanoutWorkflow, ItemWorkflow, RunWorkflow, AgentWorkflow)
PASSTHROUGH = (
    "corral",
    "pydantic",
    "anyio",
    "opentelemetry",
)
"""Imported once, outside the workflow sandbox: corral's code is deterministic where the
workflows use it (the agent core), and reloading it per workflow would cost seconds."""


@dataclass(frozen=True)
class WorkerSettings:
    """One worker process: where the server is, its host name, and how much it takes on."""

    temporal: TemporalSettings
    host: str = field(default_factory=socket.gethostname)
    max_concurrent: int = 16
    graceful_shutdown_s: float = 10.0
    sticky_timeout_s: float = 5.0
    """How long a workflow waits for this worker's cache before any worker takes it over."""
    on_journal: JournalObserver | None = None
    """Told of the batches workflows journal by themselves (approval requests among them)."""

    @property
    def host_queue(self) -> str:
        return host_queue(self.host)


def workflow_runner() -> SandboxedWorkflowRunner:
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH)
    return SandboxedWorkflowRunner(restrictions=restrictions)


async def run_worker(
    settings: WorkerSettings,
    config: CorralConfig,
    *,
    env: Mapping[str, str] | None = None,
    client: Client | None = None,
    tracer_provider: TracerProvider | None = None,
    task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Host corral's workflows and activities until cancelled; `task_status` gets the host
    queue once both pollers run. `client` is one already connected (a test server's): its
    data converter is the workers' too. Spans go to `tracer_provider`, else to the exporter
    `[otel]` or the OTEL_* variables of `env` name (flushed when the worker stops)."""
    environ = os.environ if env is None else env
    async with _telemetry(config, environ, tracer_provider) as provider:
        if client is None:
            temporal = _worker_temporal(settings.temporal, config)
            client = await connect(temporal, tracer_provider=provider)
            tracing = None
        else:
            tracing = _tracing_for(client, provider)
        await _serve(settings, config, environ, client, tracing, task_status)


async def _serve(
    settings: WorkerSettings,
    config: CorralConfig,
    environ: Mapping[str, str],
    client: Client,
    tracing: Interceptor | None,
    task_status: anyio.abc.TaskStatus[str],
) -> None:
    opened = open_worker_services(
        config, host=settings.host, env=environ, on_journal=settings.on_journal
    )
    async with opened as services:
        activities = CorralActivities(services)
        extra = [] if tracing is None else [tracing]
        workers = [
            _worker(client, settings, settings.temporal.task_queue, activities.shared, True, extra),
            _worker(client, settings, settings.host_queue, activities.on_host, False, extra),
        ]
        async with anyio.create_task_group() as tg:
            for worker in workers:
                tg.start_soon(_run_shielded, worker)
            task_status.started(settings.host_queue)
            try:
                await anyio.sleep_forever()
            finally:
                with anyio.move_on_after(SHUTDOWN_TIMEOUT, shield=True):
                    for worker in workers:
                        await worker.shutdown()


async def _run_shielded(worker: Worker) -> None:
    # The SDK's run() shuts down on asyncio cancellation, but anyio would cancel its shutdown
    # too; `run_worker` calls `shutdown()` instead, from a shielded scope.
    with anyio.CancelScope(shield=True):
        await worker.run()


def _worker(
    client: Client,
    settings: WorkerSettings,
    queue: str,
    activities: list[Any],
    shared: bool,
    interceptors: list[Interceptor],
) -> Worker:
    return Worker(
        client,
        task_queue=queue,
        workflows=list(WORKFLOWS) if shared else [],
        activities=activities,
        interceptors=interceptors,
        workflow_runner=workflow_runner(),
        max_concurrent_activities=settings.max_concurrent,
        graceful_shutdown_timeout=timedelta(seconds=settings.graceful_shutdown_s),
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=settings.sticky_timeout_s),
    )


def _worker_temporal(temporal: TemporalSettings, config: CorralConfig) -> TemporalSettings:
    """`temporal` with the blob store (the shared journal's database, if any) and threshold of
    the worker's config, unless set."""
    return dataclasses.replace(
        temporal,
        blob_dir=temporal.blob_dir or config.home / BLOBS_DIR,
        payload_threshold_bytes=config.temporal.payload_threshold_bytes,
        journal_url=temporal.journal_url or config.journal.url,
    )


def _tracing_for(client: Client, provider: TracerProvider | None) -> Interceptor | None:
    """The tracing interceptor the workers need beyond what `client` already brings."""
    if provider is None:
        return None
    if any(isinstance(i, TracingInterceptor) for i in client.config()["interceptors"]):
        return None
    return CorralTracingInterceptor(provider)


@asynccontextmanager
async def _telemetry(
    config: CorralConfig, env: Mapping[str, str], given: TracerProvider | None
) -> AsyncIterator[TracerProvider | None]:
    """`given`, else the provider `[otel]` and the OTEL_* variables ask for (None for none),
    flushed when the block ends."""
    if given is not None:
        yield given
        return
    from corral.observability import build_telemetry, telemetry_settings  # the SDK is slow to load

    settings = telemetry_settings(config.otel, env)
    if settings.traces == "none":
        yield None
        return
    telemetry = build_telemetry(settings)
    try:
        yield telemetry.tracer_provider
    finally:
        with anyio.move_on_after(SHUTDOWN_TIMEOUT, shield=True):
            await anyio.to_thread.run_sync(telemetry.shutdown, abandon_on_cancel=True)
