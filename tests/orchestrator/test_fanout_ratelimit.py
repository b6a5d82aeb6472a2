"""A 429 storm during a fan-out is absorbed: every item finishes and the rate stays in bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents import CorralConfig, RateLimit
from corral.orchestrator.fanout import run_fanout
from corral.orchestrator.model_server import FaultRates, ModelServerOptions, serve_model_server
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate
from tests._fanout import SCHEMA, report_then_answer

pytestmark = pytest.mark.anyio

ITEMS = 40
RPM = 3000  # 50 requests a second, a bucket of one second's worth


def busiest_second(times: list[float]) -> int:
    times = sorted(times)
    best, start = 0, 0
    for end, at in enumerate(times):
        while at - times[start] >= 1.0:
            start += 1
        best = max(best, end - start + 1)
    return best


async def test_a_429_storm_is_absorbed_by_the_shared_limiter(tmp_path: Path) -> None:
    options = ModelServerOptions(
        latency_ms=10, faults=FaultRates(ratelimit=0.3), retry_after=0.05, seed=7
    )
    async with serve_model_server(report_then_answer, options) as server:
        config = CorralConfig(
            home=tmp_path / "home",
            base_url=server.base_url,
            rate_limits={"default": RateLimit(requests_per_minute=RPM)},
            request_max_retries=20,
        )
        outcome = await run_fanout(
            config,
            FanoutJob(
                items=tuple([{"n": n} for n in range(ITEMS)]),
                template="Item {n}: report it.",
                result_schema=SCHEMA,
                cwd=tmp_path,
                concurrency=16,  # `in_transit` below
                worker=WorkerTemplate(tools=()),
            ),
            RunSetup(env={}),
        )
        stats = server.stats()
        times = [r["time"] for r in server.requests]
    assert stats["faults"]["rate_limited"] > 5, "the storm happened"
    assert outcome.done == ITEMS and outcome.failed == 0
    assert [item.result for item in outcome.items] == [{"n": n} for n in range(ITEMS)]
    per_second = RPM // 60
    # The limiter admits at most a bucket plus one second of refill in any second; the server
    # sees arrivals, and an admitted request can be held up on its way by at most the others
    # in flight (the fan-out's concurrency), so a second at the server may hold those too.
    in_transit = 16
    assert busiest_second(times) <= 2 * per_second + in_transit, "bucket plus one second of refill"
