"""Trace and span ids on log records, so a log line can be found from its span and back.

`TraceIdsFilter` reads the OpenTelemetry span current in the logging call's context (the tool
span inside a tool call, the `chat` span during a model call) and puts its ids on the record.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace

TRACE_ID_FIELD = "otel_trace_id"
SPAN_ID_FIELD = "otel_span_id"


class TraceIdsFilter(logging.Filter):
    """Adds `otel_trace_id` and `otel_span_id` (hex, or "" outside a span); drops nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        span = trace.get_current_span().get_span_context()
        valid = span.is_valid
        setattr(record, TRACE_ID_FIELD, trace.format_trace_id(span.trace_id) if valid else "")
        setattr(record, SPAN_ID_FIELD, trace.format_span_id(span.span_id) if valid else "")
        return True


@contextmanager
def trace_ids_on_logs(logger: logging.Logger | None = None) -> Iterator[TraceIdsFilter]:
    """Install a `TraceIdsFilter` on the handlers of `logger` (the root's) until the block ends."""
    handlers = list((logger or logging.getLogger()).handlers)
    ids = TraceIdsFilter()
    for handler in handlers:
        handler.addFilter(ids)
    try:
        yield ids
    finally:
        for handler in handlers:
            handler.removeFilter(ids)
