"""A thousand items at concurrency 256 against the scripted server with 200 ms of latency.

Each worker asks for `report_result` and then answers in one line (two model requests) and has
no other tool, so this exercises the pool, the journal and the shared client at scale. How fast
it goes is `benchmarks/fanout.py`'s business; this checks that it all arrives, within bounds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents import CorralConfig
from corral.orchestrator.fanout import run_fanout
from corral.orchestrator.model_server import ModelServerOptions, serve_model_server
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate
from tests._fanout import SCHEMA, report_then_answer

pytestmark = pytest.mark.anyio

ITEMS = 1000
CONCURRENCY = 256


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
