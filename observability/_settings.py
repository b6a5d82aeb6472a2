"""What to export where: corral's `[otel]` config merged with the standard OTEL_* variables."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from corral.agents import OtelConfig

logger = logging.getLogger(__name__)
_EXPORTERS = ("otlp", "console", "none")


@dataclass(frozen=True)
class TelemetrySettings:
    """What to export where, once config and environment are merged."""

    traces: str
    metrics: str
    endpoint: str | None
    protocol: str
    service_name: str

    @property
    def enabled(self) -> bool:
        return self.traces != "none" or self.metrics != "none"


def telemetry_settings(config: OtelConfig, env: Mapping[str, str]) -> TelemetrySettings:
    endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or config.endpoint
    default = config.exporter
    if default == "none" and env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        default = "otlp"
    return TelemetrySettings(
        traces=_choice(env.get("OTEL_TRACES_EXPORTER"), default),
        metrics=_choice(env.get("OTEL_METRICS_EXPORTER"), default),
        endpoint=endpoint,
        protocol=env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or config.protocol,
        service_name=env.get("OTEL_SERVICE_NAME") or config.service_name,
    )


def _choice(value: str | None, default: str) -> str:
    chosen = (value or default).strip().lower()
    if chosen not in _EXPORTERS:
        logger.warning("unknown OpenTelemetry exporter %r: nothing is exported", chosen)
        return "none"
    return chosen
