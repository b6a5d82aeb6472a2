"""Transient faults never fail a fan-out item: 429s, 500s and cut streams are outlasted.

Issue 16's case: 200 items against a server that answers 30% of requests with a 429, 5% with a
500 and cuts 5% of streams. Before the retry deadline, 3 to 6 items failed for good when one call
drew five faults in a row. The backoff base is a millisecond here so the test does not wait.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from corral.agents import CorralConfig
from corral.orchestrator.fanout import run_fanout
from corral.orchestrator.model_server import FaultRates, ModelServerOptions, serve_model_server
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate
from tests._fanout import SCHEMA, report_then_answer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ITEMS = 200
STORM = FaultRates(ratelimit=0.3, disconnect=0.05, fail=0.05)
RUN_DEADLINE = 50


async def test_two_hundred_items_through_a_fault_storm_all_finish(tmp_path: Path) -> None:
    options = ModelServerOptions(faults=STORM, retry_after=0.001, seed=16)
    with anyio.fail_after(RUN_DEADLINE):
        async with serve_model_server(report_then_answer, options) as server:
            config = CorralConfig(
                home=tmp_path / "home",
                base_url=server.base_url,
                request_backoff_initial_ms=1,
            )
            outcome = await run_fanout(
                config,
                FanoutJob(
                    items=tuple([{"n": n} for n in range(ITEMS)]),
                    template="Item {n}: report it.",
                    result_schema=SCHEMA,
                    cwd=tmp_path,
                    concurrency=16,
                    worker=WorkerTemplate(tools=()),
                ),
                RunSetup(env={}),
            )
            faults = server.stats()["faults"]
    assert faults["rate_limited"] > 60 and faults["server_error"] > 10, "the storm happened"
    assert faults["disconnect"] > 10
    assert (outcome.done, outcome.failed) == (ITEMS, 0)
    assert [item.result for item in outcome.items] == [{"n": n} for n in range(ITEMS)]
