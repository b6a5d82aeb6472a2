"""One trace per run on Temporal: the starter's span, the workflows and every activity.

A two-item fan-out runs on the offline dev server; the client carries corral's tracing
interceptor on an in-memory exporter. The worker runs in this process (built on that client),
or as a `corral worker` process exporting to an OTLP receiver as its OTEL_* variables say.
Each item makes one shell call, reports its result, and ends.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from corral.agents import CorralConfig
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import FanoutJob
from corral.orchestrator.temporal import (
    ActivityPolicy,
    TemporalExecutor,
    TemporalSettings,
    connect,
    run_span,
)

from ..observability._otlp_receiver import otlp_receiver
from ._harness import WAIT, in_process_worker
from .test_fanout_on_temporal import corral_worker

pytestmark = pytest.mark.anyio

ITEMS = 2
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEMPLATE = "Item {n}: echo n, then report it."
POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
_ITEM = re.compile(r"Item (\d+):")


def scripted(request: dict[str, Any]) -> Any:
    """A shell call, then `report_result`, then one line."""
    item = int(_ITEM.findall(json.dumps(request["input"]))[-1])
    done = [i for i in request["input"] if i.get("type") == "function_call_output"]
    if not done:
        return [_call("shell", {"command": f"echo {item}"})]
    if len(done) == 1:
        return [_call("report_result", {"n": item})]
    return f"item {item} reported"


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}


class Spans:
    """The finished spans, looked up by name and by parent."""

    def __init__(self, spans: tuple[ReadableSpan, ...]) -> None:
        self.all = spans
        self.by_id = {s.context.span_id: s for s in spans if s.context is not None}

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.all if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        (span,) = self.named(name)
        return span

    def parent_of(self, span: ReadableSpan) -> ReadableSpan:
        assert span.parent is not None, f"{span.name} has no parent"
        return self.by_id[span.parent.span_id]


async def test_a_fanout_on_temporal_is_one_trace_from_the_starter_to_every_tool(
    temporal_address: str, tmp_path: Path
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = TemporalSettings(address=temporal_address, blob_dir=home / "blobs")
    client = await connect(settings, tracer_provider=provider)
    executor = TemporalExecutor(settings, POLICY, client)
    async with serve_model_server(scripted) as model:
        config = CorralConfig(home=home, base_url=model.base_url)
        async with in_process_worker(client, config):
            with run_span(provider, "run-traced") as root, anyio.fail_after(WAIT):
                done = await executor.run_fanout(
                    config,
                    FanoutJob(
                        items=tuple([{"n": n} for n in range(ITEMS)]),
                        template=TEMPLATE,
                        result_schema=SCHEMA,
                        cwd=workspace,
                        run_id="run-traced",
                    ),
                )
    assert [(i.index, i.status) for i in done.outcome.items] == [(0, "done"), (1, "done")]
    spans = Spans(exporter.get_finished_spans())
    root_id = root.get_span_context()
    assert {s.context.trace_id for s in spans.all if s.context} == {root_id.trace_id}

    start = spans.one("StartWorkflow:corral.FanoutWorkflow")
    assert spans.parent_of(start).name == "invoke_workflow corral"
    assert spans.parent_of(start).context.span_id == root_id.span_id
    # Temporal's interceptor hangs a workflow's spans (its RunWorkflow span and the activities
    # and children it starts) from the span that started it.
    assert spans.parent_of(spans.one("RunWorkflow:corral.FanoutWorkflow")) is start
    children = spans.named("StartChildWorkflow:corral.ItemWorkflow")
    assert len(children) == ITEMS
    assert all(spans.parent_of(child) is start for child in children)
    items = spans.named("RunWorkflow:corral.ItemWorkflow")
    assert sorted(spans.parent_of(item).name for item in items) == [children[0].name] * ITEMS

    chats = spans.named(f"chat {config.model}")
    assert len(chats) == 3 * ITEMS, "three model calls per item"
    for chat in chats:
        assert chat.kind is SpanKind.CLIENT
        assert chat.attributes is not None
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.request.model"] == config.model
        assert "gen_ai.usage.input_tokens" in chat.attributes
        assert str(chat.attributes["corral.prompt.version"]).startswith("sha256:")
        activity = spans.parent_of(chat)
        assert activity.name == "RunActivity:corral.call_model"
        assert spans.parent_of(activity).name == "StartActivity:corral.call_model"
        assert spans.parent_of(spans.parent_of(activity)) in children
    tools = spans.named("execute_tool shell") + spans.named("execute_tool report_result")
    assert len(tools) == 2 * ITEMS
    for tool in tools:
        assert tool.attributes is not None and tool.attributes["gen_ai.tool.type"] == "function"
        assert spans.parent_of(tool).name == "RunActivity:corral.run_tools"
    for child in children:
        mine = [s for s in chats + tools if _descends(spans, s, child)]
        assert len(mine) == 5, "each item's model calls and tools hang below its own workflow"


async def test_a_corral_worker_process_exports_its_spans_into_the_starters_trace(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    provider = TracerProvider()
    settings = TemporalSettings(address=temporal_address, blob_dir=home / "blobs")
    client = await connect(settings, tracer_provider=provider)
    async with otlp_receiver() as receiver, serve_model_server(scripted) as model:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{receiver.port}")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "corral-worker-alpha")
        monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
        async with corral_worker(temporal_address, "alpha", home):
            config = CorralConfig(home=home, base_url=model.base_url)
            with run_span(provider, "run-otlp") as root, anyio.fail_after(WAIT):
                await TemporalExecutor(settings, POLICY, client).run_fanout(
                    config,
                    FanoutJob(
                        items=tuple([{"n": 0}]),
                        template=TEMPLATE,
                        result_schema=SCHEMA,
                        cwd=workspace,
                        run_id="run-otlp",
                    ),
                )
        # The worker flushed its spans when it stopped.
    spans = receiver.spans
    assert {s.service for s in spans} == {"corral-worker-alpha"}
    trace_id = root.get_span_context().trace_id.to_bytes(16, "big")
    assert {s.span.trace_id for s in spans} == {trace_id}
    names = [s.span.name for s in spans]
    assert names.count(f"chat {config.model}") == 3
    assert names.count("execute_tool shell") == 1
    assert "RunWorkflow:corral.ItemWorkflow" in names and "RunActivity:corral.run_tools" in names


def _descends(spans: Spans, span: ReadableSpan, ancestor: ReadableSpan) -> bool:
    while span.parent is not None:
        span = spans.by_id[span.parent.span_id]
        if span is ancestor:
            return True
    return False
