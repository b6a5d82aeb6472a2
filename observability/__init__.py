"""OpenTelemetry tracing, metrics and cost for corral.

Empty until the observability work lands: it will wrap the model client and the tool registry
and plug into `agents.RunnerHooks` from outside, so `agents` and `tools` never import it.
"""
