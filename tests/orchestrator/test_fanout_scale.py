"""A thousand items at concurrency 256 against the scripted server with 200 ms of latency.

Each worker asks for `report_result` and then answers in one line (two model requests) and has
no other tool, so this exercises the pool, the journal and the shared client at scale. How fast
it goes is `benchmarks/fanout.py`'s business; this checks that it all arrives, within bounds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from corral.agents import CorralConfig
from corral.orchestrator.fanout import run_fanout
from corral.orchestrator.model_server import ModelServerOptions, serve_model_server
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate

pytestmark = pytest.mark.anyio

ITEMS = 1000
CONCURRENCY = 256
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
_ITEM = re.compile(r"Item (\d+):")


def report_then_answer(request: dict[str, Any]) -> Any:
    if any(i.get("type") == "function_call_output" for i in request["input"]):
        return "reported"
    arguments = json.dumps({"n": int(_ITEM.findall(json.dumps(request["input"]))[-1])})
    return [{"type": "function_call", "name": "report_result", "arguments": arguments}]


async def test_a_thousand_items_at_concurrency_256_all_report_within_the_bound(
    tmp_path: Path,
) -> None:
    options = ModelServerOptions(latency_ms=200)
    async with serve_model_server(report_then_answer, options) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url)
        outcome = await run_fanout(
            config,
            FanoutJob(
                items=tuple([{"n": n} for n in range(ITEMS)]),
                template="Item {n}: report it.",
                result_schema=SCHEMA,
                cwd=tmp_path,
                concurrency=CONCURRENCY,
                worker=WorkerTemplate(tools=()),
            ),
            RunSetup(env={}),
        )
        stats = server.stats()
    assert [item.result for item in outcome.items] == [{"n": n} for n in range(ITEMS)]
    assert outcome.done == ITEMS
    assert stats["requests"]["total"] == 2 * ITEMS
    assert 1 < stats["max_in_flight"] <= CONCURRENCY
