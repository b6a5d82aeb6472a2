"""A supervised run is one trace: each worker's turns hang from the supervisor's spawn span."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from corral.agents import AgentStatus, CorralConfig
from corral.observability import TracingHooks
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, RunSetup, run_single_agent
from corral.orchestrator.supervisor import collab_tool_providers

pytestmark = pytest.mark.anyio


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def is_worker(request: dict[str, Any]) -> bool:
    return "<subagent_context>" in json.dumps(request["input"])


def supervisor(request: dict[str, Any]) -> Any:
    if is_worker(request):
        return "counted"
    done = {
        i["call_id"]: i["output"]
        for i in request["input"]
        if i.get("type") == "function_call_output"
    }
    if not done:
        return [
            call("s1", "spawn_agent", message="count apples"),
            call("s2", "spawn_agent", message="count pears"),
        ]
    workers = [json.loads(done[c])["agent_id"] for c in ("s1", "s2")]
    finished: set[str] = set()
    for call_id, output in done.items():
        if call_id.startswith("w"):
            finished.update(json.loads(output)["status"])
    pending = [w for w in workers if w not in finished]
    if pending:
        return [call(f"w{len(done)}", "wait_agent", targets=pending, timeout_ms=20_000)]
    return "all counted"


async def test_workers_turns_are_children_of_the_spawn_spans_that_started_them(
    tmp_path: Path,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    hooks = TracingHooks(provider, run_id="run-sup")
    async with serve_model_server(supervisor) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url)
        outcome = await run_single_agent(
            config,
            ExecJob(task="count the fruit", cwd=tmp_path, run_id="run-sup", role="supervisor"),
            RunSetup(env={}, hooks=hooks, tool_providers=collab_tool_providers()),
        )
    hooks.close()
    assert outcome.finish.status is AgentStatus.COMPLETED
    spans: list[ReadableSpan] = list(exporter.get_finished_spans())
    index = {s.context.span_id: s for s in spans if s.context is not None}
    assert len({s.context.trace_id for s in spans if s.context}) == 1
    spawns = [s for s in spans if s.name == "execute_tool spawn_agent"]
    workers = [
        s
        for s in spans
        if s.name.startswith("invoke_agent")
        and s.attributes
        and s.attributes.get("corral.agent.depth") == 1
    ]
    assert len(spawns) == 2 and len(workers) >= 2
    parents = {index[w.parent.span_id].context.span_id for w in workers if w.parent}
    assert parents == {s.context.span_id for s in spawns if s.context}
    for spawn in spawns:
        assert spawn.parent is not None
        owner = index[spawn.parent.span_id]
        assert owner.name == "invoke_agent root" and owner.parent is not None
        assert index[owner.parent.span_id].parent is None
