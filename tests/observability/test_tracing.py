"""One trace per run: a fan-out against the scripted model server, recorded in memory."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from corral.agents import CorralConfig, ModelPrice, Usage
from corral.observability import Redactor, RunMetrics, TracingHooks
from corral.orchestrator._run import cost_of, price_for
from corral.orchestrator.fanout import run_fanout
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate
from tests._fanout import SCHEMA, item_of, outputs, report

pytestmark = pytest.mark.anyio

TEMPLATE = "Item {n}: report n."
PLANTED_KEY = "sk-planted-0123456789abcdef"


def invalid_then_valid(request: dict[str, Any]) -> Any:
    """Item 0 first reports an invalid result (a failing tool call); every item then a valid one."""
    n = item_of(request)
    done = outputs(request)
    if not done:
        return report({"n": "zero"}) if n == 0 else report({"n": n})
    if n == 0 and len(done) == 1:
        return report({"n": n})
    return "reported"


async def traced_fanout(
    tmp_path: Path,
    items: Sequence[dict[str, Any]],
    *,
    template: str = TEMPLATE,
    content: Redactor | None = None,
) -> tuple[list[ReadableSpan], InMemoryMetricReader]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    prices = {"gpt-5": ModelPrice(input_per_mtok=1.25, output_per_mtok=10.0)}

    def price(model: str, usage: Usage) -> float:
        return cost_of(usage, price_for(prices, model))

    hooks = TracingHooks(
        provider,
        run_id="run-traced",
        cost_of=price,
        metrics=RunMetrics(MeterProvider(metric_readers=[reader])),
        content=content,
    )
    async with serve_model_server(invalid_then_valid) as server:
        config = CorralConfig(
            home=tmp_path / "home", base_url=server.base_url, model="gpt-5", prices=prices
        )
        outcome = await run_fanout(
            config,
            FanoutJob(
                items=tuple(items),
                template=template,
                result_schema=SCHEMA,
                cwd=tmp_path,
                run_id="run-traced",
                worker=WorkerTemplate(tools=()),
            ),
            RunSetup(env={"OPENAI_API_KEY": PLANTED_KEY}, hooks=hooks),
        )
    hooks.close()
    assert outcome.ok
    return list(exporter.get_finished_spans()), reader


def by_id(spans: list[ReadableSpan]) -> dict[int, ReadableSpan]:
    return {s.context.span_id: s for s in spans if s.context is not None}


def parent_of(span: ReadableSpan, index: dict[int, ReadableSpan]) -> ReadableSpan | None:
    return index.get(span.parent.span_id) if span.parent is not None else None


def named(spans: list[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


async def test_a_fanout_run_is_one_trace_whose_every_span_reaches_the_root(
    tmp_path: Path,
) -> None:
    spans, _ = await traced_fanout(tmp_path, [{"n": 0}, {"n": 1}])
    index = by_id(spans)
    (root,) = [s for s in spans if s.parent is None]
    assert root.name == "invoke_workflow corral"
    assert root.attributes is not None and root.attributes["corral.run.id"] == "run-traced"
    assert {s.context.trace_id for s in spans if s.context} == {root.context.trace_id}
    for span in spans:
        node: ReadableSpan | None = span
        while node is not None and node is not root:
            node = parent_of(node, index)
        assert node is root, f"{span.name} does not reach the run's root"
    assert len(named(spans, "chat gpt-5")) == 5 and len(named(spans, "execute_tool")) == 3


async def test_workers_invoke_agent_spans_are_children_of_their_item_spans(
    tmp_path: Path,
) -> None:
    spans, _ = await traced_fanout(tmp_path, [{"n": 0}, {"n": 1}])
    index = by_id(spans)
    agents = named(spans, "invoke_agent ")
    assert sorted(s.name for s in agents) == ["invoke_agent item 0", "invoke_agent item 1"]
    for agent in agents:
        item = parent_of(agent, index)
        assert item is not None and item.name == agent.name.replace(
            "invoke_agent item", "corral.fanout_item"
        )
        assert item.parent is not None and index[item.parent.span_id].parent is None
        assert agent.kind.name == "INTERNAL"
        assert agent.attributes is not None
        assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    for call in named(spans, "chat ") + named(spans, "execute_tool "):
        parent = parent_of(call, index)
        assert parent is not None and parent.name.startswith("invoke_agent item")


async def test_chat_spans_carry_usage_and_agent_totals_are_their_sum(tmp_path: Path) -> None:
    spans, reader = await traced_fanout(tmp_path, [{"n": 0}, {"n": 1}])
    index = by_id(spans)
    for agent in named(spans, "invoke_agent "):
        chats = [s for s in named(spans, "chat ") if parent_of(s, index) is agent]
        assert chats and agent.attributes is not None
        for chat in chats:
            assert chat.kind.name == "CLIENT" and chat.attributes is not None
            assert chat.attributes["gen_ai.request.model"] == "gpt-5"
            assert int(str(chat.attributes["gen_ai.usage.input_tokens"])) > 0
            assert "gen_ai.usage.input_tokens" not in agent.attributes

        def total(key: str, spans: list[ReadableSpan] = chats) -> float:
            return sum(float(str((s.attributes or {})[key])) for s in spans)

        attrs = agent.attributes
        assert attrs["corral.agent.total.input_tokens"] == total("gen_ai.usage.input_tokens")
        assert attrs["corral.agent.total.output_tokens"] == total("gen_ai.usage.output_tokens")
        assert attrs["corral.agent.total.cost_usd"] == pytest.approx(total("corral.cost_usd"))
        assert float(str(attrs["corral.agent.total.cost_usd"])) > 0
    data = reader.get_metrics_data()
    assert data is not None
    names = {m.name for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert {"gen_ai.client.operation.duration", "gen_ai.client.token.usage"} <= names
    assert {"gen_ai.execute_tool.duration", "gen_ai.invoke_agent.duration", "corral.cost"} <= names


async def test_agent_and_chat_spans_carry_the_version_of_the_base_instructions(
    tmp_path: Path,
) -> None:
    spans, _ = await traced_fanout(tmp_path, [{"n": 0}, {"n": 1}])
    index = by_id(spans)
    agents = named(spans, "invoke_agent ")
    for agent in agents:
        version = (agent.attributes or {})["corral.prompt.version"]
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", str(version))
        chats = [s for s in named(spans, "chat ") if parent_of(s, index) is agent]
        assert chats
        assert all((s.attributes or {})["corral.prompt.version"] == version for s in chats)
    assert len({(a.attributes or {})["corral.prompt.version"] for a in agents}) == 1


async def test_a_failing_tool_marks_its_span_as_an_error(tmp_path: Path) -> None:
    spans, _ = await traced_fanout(tmp_path, [{"n": 0}])
    first, second = sorted(
        named(spans, "execute_tool report_result"), key=lambda s: s.start_time or 0
    )
    assert first.status.status_code is StatusCode.ERROR
    assert first.attributes is not None and first.attributes["error.type"] == "tool_error"
    assert second.status.status_code is StatusCode.UNSET
    assert second.attributes is not None and "error.type" not in second.attributes


async def test_no_span_carries_content_or_the_planted_api_key(tmp_path: Path) -> None:
    spans, _ = await traced_fanout(tmp_path, [{"n": 0}])
    dumped = json.dumps([dict(s.attributes or {}) for s in spans] + [s.name for s in spans])
    assert PLANTED_KEY not in dumped
    assert "Item 0" not in dumped and "report n" not in dumped


async def test_content_switched_on_reaches_spans_with_secrets_redacted(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": PLANTED_KEY, "HOME": "/root"}
    template = "Item {n}: report n. Authorization: Bearer {token}"
    items = [{"n": 0, "token": "tok-abcdefghijkl"}]
    redactor = Redactor.from_env(env)
    spans, _ = await traced_fanout(tmp_path, items, template=template, content=redactor)
    chats = named(spans, "chat ")
    inputs = [str((s.attributes or {})["gen_ai.input.messages"]) for s in chats]
    assert all("Item 0: report n." in text for text in inputs)
    assert all("Authorization: [REDACTED]" in text for text in inputs)
    tools = named(spans, "execute_tool ")
    assert all("gen_ai.tool.call.arguments" in (t.attributes or {}) for t in tools)
    dumped = json.dumps([dict(s.attributes or {}) for s in spans])
    assert PLANTED_KEY not in dumped and "tok-abcdefghijkl" not in dumped


def test_the_redactor_removes_keys_tokens_and_configured_patterns() -> None:
    redact = Redactor(["hunter2-secret-value"], patterns=[r"ghp_[A-Za-z0-9]+"])
    text = "sk-proj-AAAABBBBCCCCDDDD hunter2-secret-value ghp_abc123 Bearer abcdefgh123 ok"
    assert redact(text) == "[REDACTED] [REDACTED] [REDACTED] Bearer [REDACTED] ok"
