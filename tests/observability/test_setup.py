"""Which exporters a run gets: corral's `[otel]` config, overridden by the OTEL_* variables."""

from __future__ import annotations

import pytest

from corral.agents import OtelConfig
from corral.observability import build_telemetry, telemetry_settings


def test_nothing_is_exported_unless_config_or_environment_ask() -> None:
    settings = telemetry_settings(OtelConfig(), {})
    assert not settings.enabled and build_telemetry(settings).tracer_provider is None


def test_the_endpoint_variable_alone_turns_otlp_on_with_the_service_name() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SERVICE_NAME": "svc"}
    settings = telemetry_settings(OtelConfig(), env)
    assert (settings.traces, settings.metrics) == ("otlp", "otlp")
    assert (settings.endpoint, settings.service_name) == ("http://127.0.0.1:1", "svc")


def test_the_variables_win_over_the_config() -> None:
    config = OtelConfig(exporter="otlp", endpoint="http://collector:4318", protocol="grpc")
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}
    env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf"
    settings = telemetry_settings(config, env)
    assert (settings.traces, settings.metrics, settings.protocol) == (
        "console",
        "none",
        "http/protobuf",
    )
    telemetry = build_telemetry(settings)
    assert telemetry.tracer_provider is not None and telemetry.meter_provider is None
    telemetry.shutdown()


def test_an_unknown_exporter_name_is_warned_about_and_exports_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = telemetry_settings(OtelConfig(), {"OTEL_TRACES_EXPORTER": "zipkin"})
    assert settings.traces == "none"
    assert "unknown OpenTelemetry exporter 'zipkin'" in caplog.text


def test_the_grpc_protocol_builds_the_grpc_span_and_metric_exporters() -> None:
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    from corral.observability._providers import _metric_exporter, _span_exporter

    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
    }
    settings = telemetry_settings(OtelConfig(), env)
    spans, metrics = _span_exporter(settings), _metric_exporter(settings)
    assert isinstance(getattr(spans, "_inner", None), OTLPSpanExporter)
    assert isinstance(getattr(metrics, "_inner", None), OTLPMetricExporter)
    assert getattr(spans, "_where", None) == "http://127.0.0.1:1"
    for exporter in (spans, metrics):
        assert exporter is not None
        exporter.shutdown()
