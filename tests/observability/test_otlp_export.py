"""`corral fanout` as a subprocess exporting its trace over OTLP/HTTP protobuf to the test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.model_server import serve_model_server
from tests._fanout import SCHEMA
from tests.e2e._cli import corral_env, run_corral

from ._otlp_receiver import Received, otlp_receiver

pytestmark = pytest.mark.anyio

FANOUT = ["fanout", "--items", "items.jsonl", "--schema", "schema.json"]
TEMPLATE = ["--template", "Item {n}: report it.", "--run-id", "run-otlp"]
PLANTED_KEY = "sk-planted-e2e-0123456789"


def reporter(request: dict[str, Any]) -> Any:
    if any(i.get("type") == "function_call_output" for i in request["input"]):
        return "reported"
    args = json.dumps({"n": 1})
    return [{"type": "function_call", "name": "report_result", "arguments": args}]


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    (root / "items.jsonl").write_text('{"n": 1}\n{"n": 2}\n')
    return root


def attribute(span: Received, key: str) -> Any:
    for pair in span.span.attributes:
        if pair.key == key:
            value = pair.value
            return value.int_value if value.HasField("int_value") else value.string_value
    return None


async def test_a_fanout_subprocess_exports_one_trace_with_the_agent_tree(tmp_path: Path) -> None:
    root_dir = workspace(tmp_path)
    async with otlp_receiver() as receiver, serve_model_server(reporter) as server:
        env = corral_env(
            tmp_path / "home",
            server.base_url,
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.port}",
            OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
            OTEL_SERVICE_NAME="corral-e2e",
            OPENAI_API_KEY=PLANTED_KEY,
        )
        result = await run_corral([*FANOUT, *TEMPLATE], env=env, cwd=root_dir)
    assert result.code == 0, result.stderr
    assert "/v1/metrics" in receiver.paths
    spans = receiver.spans
    by_id = {s.span.span_id: s for s in spans}
    (root,) = [s for s in spans if not s.span.parent_span_id]
    assert root.span.name == "invoke_workflow corral" and root.service == "corral-e2e"
    assert attribute(root, "corral.run.id") == "run-otlp"
    assert {s.span.trace_id for s in spans} == {root.span.trace_id}
    agents = sorted((s for s in spans if s.span.name.startswith("invoke_agent")), key=str)
    assert sorted(s.span.name for s in agents) == ["invoke_agent item 0", "invoke_agent item 1"]
    for agent in agents:
        item = by_id[agent.span.parent_span_id]
        assert item.span.name.startswith("corral.fanout_item")
        assert item.span.parent_span_id == root.span.span_id
    chats = [s for s in spans if s.span.name.startswith("chat ")]
    assert len(chats) == 4
    for chat in chats:
        assert by_id[chat.span.parent_span_id] in agents
        assert attribute(chat, "gen_ai.usage.input_tokens") > 0
    assert PLANTED_KEY.encode() not in b"".join(s.span.SerializeToString() for s in spans)


# Left to its defaults, an OTLP exporter retries an unreachable endpoint with backoff for about
# a minute per export at shutdown; with corral's bounded export the run ends long before this.
@pytest.mark.timeout(60)
async def test_an_unreachable_endpoint_is_warned_about_once_and_the_run_succeeds(
    tmp_path: Path,
) -> None:
    root_dir = workspace(tmp_path)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()  # nothing listens there now
    async with serve_model_server(reporter) as server:
        env = corral_env(
            tmp_path / "home",
            server.base_url,
            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
            OTEL_EXPORTER_OTLP_TIMEOUT="2",
        )
        result = await run_corral([*FANOUT, *TEMPLATE], env=env, cwd=root_dir)
    assert result.code == 0, result.stderr
    assert "2 done, 0 failed of 2 items" in result.stderr
    assert result.stderr.count("could not export") == 1, result.stderr
    assert f"127.0.0.1:{port}/v1/" in result.stderr
    assert "Traceback" not in result.stderr
