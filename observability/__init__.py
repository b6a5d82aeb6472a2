"""OpenTelemetry tracing, metrics and cost for corral.

It plugs into `agents.RunnerHooks` from outside, so `agents` and `tools` never import it. Tracer
and meter providers are passed in, never set globally. `Telemetry` is imported on first use:
it brings in the OpenTelemetry SDK, which a run that exports nothing never loads.
"""

from typing import TYPE_CHECKING

from corral._lazy import lazy_exports

from ._content import CAPTURE_ENV as CAPTURE_ENV
from ._content import Redactor as Redactor
from ._content import capture_enabled as capture_enabled
from ._logging import TraceIdsFilter as TraceIdsFilter
from ._logging import trace_ids_on_logs as trace_ids_on_logs
from ._metrics import RunMetrics as RunMetrics
from ._prices import DEFAULT_PRICES as DEFAULT_PRICES
from ._prices import missing_price as missing_price
from ._prices import price_table as price_table
from ._settings import TelemetrySettings as TelemetrySettings
from ._settings import telemetry_settings as telemetry_settings
from ._setup import build_telemetry as build_telemetry
from ._setup import open_observability as open_observability
from ._tool_extras import record_hook_span as record_hook_span
from ._tool_extras import record_tool_extras as record_tool_extras
from ._trace_tree import TURN_KIND as TURN_KIND
from ._trace_tree import TraceNode as TraceNode
from ._trace_tree import build_trace_tree as build_trace_tree
from ._trace_tree import format_trace_tree as format_trace_tree
from ._tracing import CostFn as CostFn
from ._tracing import TracingHooks as TracingHooks
from ._tracing import chat_response_attributes as chat_response_attributes
from ._tracing import current_trace_context as current_trace_context
from ._waits import WaitRecorder as WaitRecorder
from ._waits import record_approval_wait as record_approval_wait
from ._waits import record_queue_wait as record_queue_wait
from ._waits import record_rate_limit_wait as record_rate_limit_wait
from ._waits import recording_waits as recording_waits

if TYPE_CHECKING:
    from ._providers import Telemetry as Telemetry
else:
    __getattr__ = lazy_exports(__name__, {"Telemetry": "._providers"})

__all__ = [
    "CAPTURE_ENV",
    "DEFAULT_PRICES",
    "TURN_KIND",
    "CostFn",
    "Redactor",
    "RunMetrics",
    "Telemetry",
    "TelemetrySettings",
    "TraceIdsFilter",
    "TraceNode",
    "TracingHooks",
    "WaitRecorder",
    "build_telemetry",
    "build_trace_tree",
    "capture_enabled",
    "chat_response_attributes",
    "current_trace_context",
    "format_trace_tree",
    "missing_price",
    "open_observability",
    "price_table",
    "record_approval_wait",
    "record_hook_span",
    "record_queue_wait",
    "record_rate_limit_wait",
    "record_tool_extras",
    "recording_waits",
    "telemetry_settings",
    "trace_ids_on_logs",
]
