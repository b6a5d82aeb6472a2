"""What a tool span shows besides the call itself: refused connections and the user's hooks.

Both tracers (the local runner's and the Temporal activities') call `record_tool_extras` when a
call ends. Each hook run becomes a child span of the tool span, timed from its own record, so a
trace shows which hook ran, for how long, and what it decided.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from corral.tools import HookRun, ToolOutput

from . import _semconv as sc


def record_tool_extras(tracer: Tracer, span: Span, output: ToolOutput) -> None:
    """Put `output`'s network refusals on `span` and its hook runs under it."""
    if output.network_denials:
        span.set_attribute(sc.CORRAL_NETWORK_DENIED, list(output.network_denials))
        span.set_attribute(sc.CORRAL_NETWORK_DENIED_COUNT, len(output.network_denials))
    for run in output.hook_runs:
        record_hook_span(tracer, trace.set_span_in_context(span), run)


def record_hook_span(tracer: Tracer, context: Context | None, run: HookRun) -> None:
    """One finished hook run as a span (in `context`, or the current one)."""
    start = int(run.started_at * 1e9)
    hook = tracer.start_span(
        f"{sc.SPAN_HOOK} {run.event.value}",
        context=context,
        start_time=start,
        attributes={
            sc.CORRAL_HOOK_EVENT: run.event.value,
            sc.CORRAL_HOOK_COMMAND: run.command,
            sc.CORRAL_HOOK_DECISION: run.decision,
            sc.CORRAL_HOOK_EXIT_CODE: -1 if run.exit_code is None else run.exit_code,
        },
    )
    if run.decision in ("failed", "timeout"):
        hook.set_status(Status(StatusCode.ERROR, run.reason))
    hook.end(end_time=start + int(run.duration * 1e9))
