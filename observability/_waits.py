"""Spans and histograms for time spent waiting: rate-limit waits, approval waits, queue waits.

The rate limiters, the shell tool and the fan-out pool report waits through plain callbacks
(`record_*`), which find the run's `WaitRecorder` in a context variable: a limiter shared by a
whole process then reports each wait to the run whose task waited.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, TracerProvider

from corral.tools import ApprovalDecision, ApprovalRequest

from . import _semconv as sc
from ._metrics import RunMetrics

_RECORDER: ContextVar[WaitRecorder | None] = ContextVar("corral_wait_recorder", default=None)


class WaitRecorder:
    """Records one run's waits as spans under the span current where the wait happened."""

    def __init__(
        self, tracer_provider: TracerProvider, root: Span, metrics: RunMetrics | None
    ) -> None:
        self._tracer = tracer_provider.get_tracer(sc.INSTRUMENTATION_NAME)
        self._root = root
        self._metrics = metrics

    def rate_limit_wait(self, endpoint: str, began_wall: float, waited: float) -> None:
        self._span(
            sc.SPAN_RATE_LIMIT_WAIT,
            began_wall,
            waited,
            {sc.CORRAL_ENDPOINT: endpoint, sc.CORRAL_WAIT_SECONDS: waited},
        )
        if self._metrics is not None:
            self._metrics.rate_limit_wait(waited, {sc.CORRAL_ENDPOINT: endpoint})

    def approval_wait(
        self, req: ApprovalRequest, decision: ApprovalDecision, began_wall: float, waited: float
    ) -> None:
        attributes: dict[str, str | float | bool] = {
            sc.GEN_AI_TOOL_NAME: req.tool,
            sc.CORRAL_APPROVAL_KIND: str(req.kind),
            sc.CORRAL_APPROVAL_APPROVED: decision.approved,
            sc.CORRAL_WAIT_SECONDS: waited,
        }
        self._span(sc.SPAN_APPROVAL_WAIT, began_wall, waited, attributes)

    def queue_wait(self, waited: float) -> None:
        if self._metrics is not None:
            self._metrics.queue_wait(waited, {})

    def _span(
        self,
        name: str,
        began_wall: float,
        waited: float,
        attributes: dict[str, str | float | bool],
    ) -> None:
        current = trace.get_current_span()
        parent = current if current.get_span_context().is_valid else self._root
        start = int(began_wall * 1e9)
        span = self._tracer.start_span(
            name,
            context=trace.set_span_in_context(parent, Context()),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=start,
        )
        span.end(end_time=start + int(waited * 1e9))


@contextmanager
def recording_waits(recorder: WaitRecorder) -> Iterator[WaitRecorder]:
    """Send the `record_*` calls made in this context (and tasks started in it) to `recorder`."""
    token = _RECORDER.set(recorder)
    try:
        yield recorder
    finally:
        _RECORDER.reset(token)


def record_rate_limit_wait(endpoint: str, began_wall: float, waited: float) -> None:
    """A `RateLimiterRegistry.on_wait` observer; does nothing outside a traced run."""
    recorder = _RECORDER.get()
    if recorder is not None:
        recorder.rate_limit_wait(endpoint, began_wall, waited)


def record_approval_wait(
    req: ApprovalRequest, decision: ApprovalDecision, began_wall: float, waited: float
) -> None:
    """The shell tool's `approval_observer` service; does nothing outside a traced run."""
    recorder = _RECORDER.get()
    if recorder is not None:
        recorder.approval_wait(req, decision, began_wall, waited)


def record_queue_wait(waited: float) -> None:
    """A fan-out pool's queue-wait observer; does nothing outside a traced run."""
    recorder = _RECORDER.get()
    if recorder is not None:
        recorder.queue_wait(waited)
