"""Tracer and meter providers from corral's `[otel]` config and the standard OTEL_* variables.

The variables win over the config: `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` (`otlp`,
`console`, `none`), `OTEL_EXPORTER_OTLP_ENDPOINT` (setting it alone turns OTLP on),
`OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, `grpc`) and `OTEL_SERVICE_NAME`. Export happens
on background threads; a failing endpoint is reported once as a warning and never fails a run.
The OpenTelemetry SDK (`_providers`) is imported only when something is exported.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import ExitStack, asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from opentelemetry import trace

from corral.agents import CompositeHooks, OtelConfig, RunnerHooks

from ._content import Redactor, capture_enabled
from ._logging import trace_ids_on_logs
from ._metrics import RunMetrics
from ._settings import TelemetrySettings, telemetry_settings
from ._tracing import CostFn, TracingHooks
from ._waits import WaitRecorder, recording_waits

if TYPE_CHECKING:
    from ._providers import Telemetry

SHUTDOWN_GRACE = 15.0
"""Seconds the final flush may take: longer than the exporter's own 10 s default timeout."""


@asynccontextmanager
async def open_observability(
    config: OtelConfig,
    env: Mapping[str, str],
    *,
    run_id: str,
    hooks: RunnerHooks,
    cost_of: CostFn | None = None,
) -> AsyncIterator[RunnerHooks]:
    """`hooks`, plus tracing hooks when config or environment ask for telemetry; flushed after.

    While it is open, the `record_*` wait observers report to this run, and with tracing on the
    root logger's handlers put trace and span ids on every record.
    """
    settings = telemetry_settings(config, env)
    if not settings.enabled:
        yield hooks
        return
    telemetry = build_telemetry(settings)
    metrics = RunMetrics(telemetry.meter_provider) if telemetry.meter_provider else None
    tracer_provider = telemetry.tracer_provider or trace.NoOpTracerProvider()
    content = Redactor.from_env(env) if capture_enabled(env) else None
    tracing = TracingHooks(
        tracer_provider, run_id=run_id, cost_of=cost_of, metrics=metrics, content=content
    )
    try:
        with ExitStack() as stack:
            stack.enter_context(
                recording_waits(WaitRecorder(tracer_provider, tracing.root, metrics))
            )
            if telemetry.tracer_provider is not None:
                stack.enter_context(trace_ids_on_logs())
            yield CompositeHooks(hooks, tracing)
    finally:
        tracing.close()
        with anyio.move_on_after(SHUTDOWN_GRACE, shield=True):
            await anyio.to_thread.run_sync(telemetry.shutdown, abandon_on_cancel=True)


def build_telemetry(settings: TelemetrySettings) -> Telemetry:
    """Providers with the exporters `settings` name (None where nothing is exported)."""
    from ._providers import build_providers  # the SDK: only for a run that exports

    return build_providers(settings)
