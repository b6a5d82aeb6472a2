"""Which exporters a run gets: corral's `[otel]` config, overridden by the OTEL_* variables."""

from __future__ import annotations

import pytest

from agents import OtelConfig
from observability import build_telemetry, telemetry_settings


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
