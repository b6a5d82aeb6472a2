"""corral's metric instruments: GenAI client durations and token usage, agent and tool durations,
waits, and cost, all with the bucket boundaries the semantic conventions advise.

Built from a meter provider passed in (never the global one), so tests read their own reader.
"""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry.metrics import MeterProvider

from . import _semconv as sc

Attributes = Mapping[str, str | int | float | bool]


class RunMetrics:
    """The instruments one process records into; every method is cheap and never raises."""

    def __init__(self, meter_provider: MeterProvider) -> None:
        meter = meter_provider.get_meter(sc.INSTRUMENTATION_NAME)
        self._operation = meter.create_histogram(
            sc.METRIC_OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=list(sc.DURATION_BUCKETS),
        )
        self._tokens = meter.create_histogram(
            sc.METRIC_TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=[float(b) for b in sc.TOKEN_BUCKETS],
        )
        self._agent = meter.create_histogram(
            sc.METRIC_AGENT_DURATION,
            unit="s",
            description="Duration of one agent turn",
            explicit_bucket_boundaries_advisory=list(sc.AGENT_DURATION_BUCKETS),
        )
        self._tool = meter.create_histogram(
            sc.METRIC_TOOL_DURATION,
            unit="s",
            description="Duration of one tool call",
            explicit_bucket_boundaries_advisory=list(sc.DURATION_BUCKETS),
        )
        self._rate_limit_wait = meter.create_histogram(
            sc.METRIC_RATE_LIMIT_WAIT,
            unit="s",
            description="Time an attempt waited for the endpoint's rate limits",
            explicit_bucket_boundaries_advisory=list(sc.AGENT_DURATION_BUCKETS),
        )
        self._queue_wait = meter.create_histogram(
            sc.METRIC_QUEUE_WAIT,
            unit="s",
            description="Time a fan-out item waited for a worker",
            explicit_bucket_boundaries_advisory=list(sc.AGENT_DURATION_BUCKETS),
        )
        self._cost = meter.create_counter(sc.METRIC_COST, unit="{USD}", description="Model cost")

    def model_call(
        self, seconds: float, input_tokens: int, output_tokens: int, attributes: Attributes
    ) -> None:
        self._operation.record(seconds, dict(attributes))
        if sc.ERROR_TYPE in attributes:
            return
        self._tokens.record(input_tokens, {**attributes, sc.GEN_AI_TOKEN_TYPE: "input"})
        self._tokens.record(output_tokens, {**attributes, sc.GEN_AI_TOKEN_TYPE: "output"})

    def cost(self, usd: float, attributes: Attributes) -> None:
        if usd > 0:
            self._cost.add(usd, dict(attributes))

    def agent_turn(self, seconds: float, attributes: Attributes) -> None:
        self._agent.record(seconds, dict(attributes))

    def tool_call(self, seconds: float, attributes: Attributes) -> None:
        self._tool.record(seconds, dict(attributes))

    def rate_limit_wait(self, seconds: float, attributes: Attributes) -> None:
        self._rate_limit_wait.record(seconds, dict(attributes))

    def queue_wait(self, seconds: float, attributes: Attributes) -> None:
        self._queue_wait.record(seconds, dict(attributes))
