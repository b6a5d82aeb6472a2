"""An MCP server's own span lands inside the run's trace, under corral's `execute_tool` span."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server
from tests.e2e._cli import corral_env, run_corral

from ._otlp_receiver import otlp_receiver

pytestmark = pytest.mark.anyio

TOOL = "mcp__traced__add"
SERVER = Path(__file__).with_name("mcp_servers") / "traced_server.py"


def add_then_answer(request: dict[str, Any]) -> Any:
    outputs = [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]
    if outputs:
        return f"the sum is {outputs[-1]}"
    args = json.dumps({"a": 2, "b": 3})
    return [{"type": "function_call", "call_id": "c1", "name": TOOL, "arguments": args}]


async def test_the_mcp_servers_span_is_a_child_of_the_agents_tool_span(tmp_path: Path) -> None:
    async with otlp_receiver() as receiver, serve_model_server(add_then_answer) as server:
        endpoint = f"http://127.0.0.1:{receiver.port}"
        home = tmp_path / "home"
        home.mkdir()
        (home / "config.toml").write_text(
            "[mcp_servers.traced]\n"
            f"command = {json.dumps(sys.executable)}\n"
            f"args = [{json.dumps(str(SERVER))}]\n"
            f'env = {{ TRACED_SERVER_ENDPOINT = "{endpoint}/v1/traces" }}\n'
        )
        env = corral_env(
            home,
            server.base_url,
            OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
            OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
            OTEL_METRICS_EXPORTER="none",
        )
        result = await run_corral(["exec", "add 2 and 3"], env=env, cwd=tmp_path)
        assert result.code == 0, result.stderr
        assert result.stdout.strip() == "the sum is 5"
        spans = list(receiver.spans)
    by_id = {s.span.span_id: s for s in spans}
    tool_spans = [
        s for s in spans if s.service != "traced-mcp" and s.span.name == f"execute_tool {TOOL}"
    ]
    server_calls = [s for s in spans if s.service == "traced-mcp" and "tools/call" in s.span.name]
    assert len(tool_spans) == 1 and server_calls, [(s.service, s.span.name) for s in spans]
    (tool,) = tool_spans
    attributes = {a.key: a.value.string_value for a in tool.span.attributes}
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["corral.mcp.server"] == "traced" and attributes["corral.mcp.tool"] == "add"
    for call in server_calls:
        assert call.span.trace_id == tool.span.trace_id, "one trace across the process boundary"
        ancestor = by_id.get(call.span.parent_span_id)
        while ancestor is not None and ancestor is not tool:
            ancestor = by_id.get(ancestor.span.parent_span_id)
        assert ancestor is tool, "the server's span hangs under the agent's tool span"
