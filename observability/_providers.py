"""The OpenTelemetry SDK's providers and exporters for a `TelemetrySettings`: imported only by
a run that exports something, since the SDK costs start-up time and memory."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SpanExporter,
    SpanExportResult,
)

from ._settings import TelemetrySettings

logger = logging.getLogger("corral.observability._setup")
"""The warnings keep the logger name they always had."""


@dataclass
class _Warner:
    """Says once per process that export failed; the exporters' own logs are muted."""

    said: bool = False

    def failed(self, what: str, where: str) -> None:
        if not self.said:
            self.said = True
            logger.warning(
                "could not export %s to %s; the run goes on without them "
                "(check OTEL_EXPORTER_OTLP_ENDPOINT or [otel] endpoint)",
                what,
                where,
            )


_WARNER = _Warner()


class _WarningSpanExporter(SpanExporter):
    def __init__(self, inner: SpanExporter, where: str) -> None:
        self._inner, self._where = inner, where

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self._inner.export(spans)
        except Exception:  # an exporter bug must not reach the run
            result = SpanExportResult.FAILURE
        if result is SpanExportResult.FAILURE:
            _WARNER.failed("traces", self._where)
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class _WarningMetricExporter(MetricExporter):
    def __init__(self, inner: MetricExporter, where: str) -> None:
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self._inner, self._where = inner, where

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        try:
            result = self._inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        except Exception:  # an exporter bug must not reach the run
            result = MetricExportResult.FAILURE
        if result is MetricExportResult.FAILURE:
            _WARNER.failed("metrics", self._where)
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self._inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self._inner.shutdown(timeout_millis=timeout_millis, **kwargs)


@dataclass
class Telemetry:
    """The providers one run (or process) exports with; `shutdown` flushes them."""

    tracer_provider: TracerProvider | None
    meter_provider: MeterProvider | None

    def shutdown(self) -> None:
        if self.tracer_provider is not None:
            self.tracer_provider.shutdown()
        if self.meter_provider is not None:
            self.meter_provider.shutdown()


def build_providers(settings: TelemetrySettings) -> Telemetry:
    """Providers with the exporters `settings` name (None where nothing is exported)."""
    # The exporters log every failed batch with a traceback; corral says it once instead.
    logging.getLogger("opentelemetry.exporter.otlp").setLevel(logging.CRITICAL)
    resource = Resource.create({"service.name": settings.service_name})
    tracer_provider = meter_provider = None
    spans = _span_exporter(settings)
    if spans is not None:
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(spans))
    metrics = _metric_exporter(settings)
    if metrics is not None:
        reader = PeriodicExportingMetricReader(metrics)
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    return Telemetry(tracer_provider, meter_provider)


def _span_exporter(settings: TelemetrySettings) -> SpanExporter | None:
    if settings.traces == "console":
        return ConsoleSpanExporter(out=sys.stderr)
    if settings.traces != "otlp":
        return None
    where = _endpoint(settings, "traces")
    if settings.protocol == "grpc":  # imported only when asked for: grpcio is slow to load
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcSpanExporter,
        )

        return _WarningSpanExporter(GrpcSpanExporter(endpoint=where), where)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return _WarningSpanExporter(OTLPSpanExporter(endpoint=where), where)


def _metric_exporter(settings: TelemetrySettings) -> MetricExporter | None:
    if settings.metrics == "console":
        return ConsoleMetricExporter(out=sys.stderr)
    if settings.metrics != "otlp":
        return None
    where = _endpoint(settings, "metrics")
    if settings.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcMetricExporter,
        )

        return _WarningMetricExporter(GrpcMetricExporter(endpoint=where), where)
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return _WarningMetricExporter(OTLPMetricExporter(endpoint=where), where)


def _endpoint(settings: TelemetrySettings, signal: str) -> str:
    grpc = settings.protocol == "grpc"
    base = settings.endpoint or ("http://localhost:4317" if grpc else "http://localhost:4318")
    return base if grpc else f"{base.rstrip('/')}/v1/{signal}"
