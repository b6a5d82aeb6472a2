"""The permits a worker process asks its parent for: the parent's one limiter per endpoint
decides, so its in-flight cap and its AIMD window are the same numbers for every process.

Both ends run in this test's event loop over a real socket pair, as between two processes
(`benchmarks.permits.worker_of`, which the benchmark of a permit's cost uses too).
"""

from __future__ import annotations

import anyio
import pytest

from benchmarks.permits import URL, worker_of
from corral.agents._config import RateLimit
from corral.agents.model import RateLimitHint
from corral.orchestrator._procs._permits import PermitClient
from corral.orchestrator._ratelimit import RateLimiterRegistry

pytestmark = pytest.mark.anyio
WAIT = 10.0


def kept(*clients: PermitClient) -> int:
    return sum(len(client.gate_for(URL).kept) for client in clients)


async def test_the_cap_holds_across_workers_and_a_freed_permit_admits_the_next() -> None:
    registry = RateLimiterRegistry({"default": RateLimit(max_concurrency=2)})
    admitted: list[str] = []
    release = anyio.Event()
    async with anyio.create_task_group() as tg:
        async with worker_of(registry, tg) as one, worker_of(registry, tg) as two:

            async def attempt(client: PermitClient, name: str) -> None:
                async with client.gate_for(URL).attempt(10):
                    admitted.append(name)
                    if name != "third":
                        await release.wait()

            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as attempts:
                    attempts.start_soon(attempt, one, "first")
                    attempts.start_soon(attempt, two, "second")
                    while registry.limiter_for(URL).stats().in_flight < 2:
                        await anyio.wait_all_tasks_blocked()
                    attempts.start_soon(attempt, two, "third")
                    await anyio.wait_all_tasks_blocked()
                    assert admitted == ["first", "second"], "the third waits: the cap is 2"
                    release.set()
                # The permits travel back, but for those a worker keeps for its next attempts.
                while registry.limiter_for(URL).stats().in_flight > kept(one, two):
                    await anyio.wait_all_tasks_blocked()
            assert sorted(admitted) == ["first", "second", "third"]
        tg.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("hint", "narrowed"),
    [(RateLimitHint(remaining_requests=0), True), (None, False)],
    ids=["limit used up", "stray 429"],
)
async def test_a_429_in_one_worker_steers_the_window_and_pause_every_worker_shares(
    hint: RateLimitHint | None, narrowed: bool
) -> None:
    registry = RateLimiterRegistry({"default": RateLimit(max_concurrency=8)})
    async with anyio.create_task_group() as tg:
        async with worker_of(registry, tg) as one:
            with anyio.fail_after(WAIT):
                gate = one.gate_for(URL)
                async with gate.attempt(10) as slot:
                    if hint is not None:
                        gate.learn_limits(hint)
                    slot.report(status=429, retry_after=1.0, usage_tokens=None)
                limiter = registry.limiter_for(URL)
                while limiter.stats().rate_limited == 0 or limiter.stats().in_flight > kept(one):
                    await anyio.wait_all_tasks_blocked()
            stats = limiter.stats()
        tg.cancel_scope.cancel()
    assert stats.rate_limited == 1
    # Only a 429 that says the limit is used up narrows and pauses every process's attempts.
    assert (stats.window < 8) is narrowed
    assert (stats.paused_for > 0) is narrowed


async def test_a_worker_keeps_its_permit_for_the_next_attempt_and_only_reports_it() -> None:
    registry = RateLimiterRegistry({"default": RateLimit(max_concurrency=64)})
    seen: list[str] = []
    async with anyio.create_task_group() as tg:
        async with worker_of(registry, tg, seen) as one:
            with anyio.fail_after(WAIT):
                for _ in range(5):
                    async with one.gate_for(URL).attempt(10) as slot:
                        slot.report(status=200, retry_after=None, usage_tokens=5)
                limiter = registry.limiter_for(URL)
                while seen.count("used") < 5:
                    await anyio.wait_all_tasks_blocked()
            stats = limiter.stats()
        tg.cancel_scope.cancel()
    # One round trip for the permit; each attempt after it went out at once.
    assert seen == ["attempt", "used", "used", "used", "used", "used"]
    assert stats.in_flight == 1, "a kept permit still counts against the cap"


@pytest.mark.parametrize(
    ("max_concurrency", "lease"), [(1, 0), (16, 2), (64, 8), (256, 32), (4096, 32)]
)
async def test_a_lease_is_an_eighth_of_the_window_and_at_most_32_permits(
    max_concurrency: int, lease: int
) -> None:
    """A worker that has not yet heard that lending ended starts at most its lease's attempts
    on kept permits, so the lease is scaled to the endpoint's cap, not fixed. With a cap of
    one, the attempt that asked fills the window: nothing is lent."""
    registry = RateLimiterRegistry({"default": RateLimit(max_concurrency=max_concurrency)})
    async with anyio.create_task_group() as tg:
        async with worker_of(registry, tg) as one:
            with anyio.fail_after(WAIT):
                async with one.gate_for(URL).attempt(10) as slot:
                    slot.report(status=200, retry_after=None, usage_tokens=5)
            gate = one.gate_for(URL)
        tg.cancel_scope.cancel()
    assert gate.keep == lease


async def test_a_paused_endpoint_lends_no_permit() -> None:
    registry = RateLimiterRegistry({"default": RateLimit(max_concurrency=256)})
    limiter = registry.limiter_for(URL)
    with anyio.fail_after(WAIT):
        async with limiter.attempt(10) as slot:
            assert limiter.lend() == 32
            limiter.learn_limits(RateLimitHint(remaining_requests=0))
            slot.report(status=429, retry_after=1.0, usage_tokens=None)
            assert limiter.lend() == 0


async def test_kept_permits_come_back_when_another_worker_must_wait_for_the_cap() -> None:
    registry = RateLimiterRegistry({"default": RateLimit(max_concurrency=2)})
    admitted: list[str] = []
    async with anyio.create_task_group() as tg:
        async with worker_of(registry, tg) as one, worker_of(registry, tg) as two:
            with anyio.fail_after(WAIT):
                async with one.gate_for(URL).attempt(10) as slot:
                    slot.report(status=200, retry_after=None, usage_tokens=5)
                assert kept(one) == 1
                hold = anyio.Event()

                async def attempt(name: str) -> None:
                    async with two.gate_for(URL).attempt(10):
                        admitted.append(name)
                        await hold.wait()

                async with anyio.create_task_group() as attempts:
                    attempts.start_soon(attempt, "second")
                    attempts.start_soon(attempt, "third")  # waits: one's kept permit is the 2nd
                    while len(admitted) < 2:
                        await anyio.wait_all_tasks_blocked()
                    assert kept(one) == 0, "the parent revoked the kept permit"
                    hold.set()
        tg.cancel_scope.cancel()
    assert admitted == ["second", "third"]


@pytest.mark.parametrize(
    "hint",
    [RateLimitHint(remaining_requests=0), RateLimitHint(requests_per_minute=600)],
    ids=["limit used up: pause and cut", "a per-minute limit learned"],
)
async def test_kept_permits_come_back_when_the_endpoint_paces_single_attempts(
    hint: RateLimitHint,
) -> None:
    registry = RateLimiterRegistry({"default": RateLimit(max_concurrency=64)})
    async with anyio.create_task_group() as tg:
        async with worker_of(registry, tg) as one, worker_of(registry, tg) as two:
            with anyio.fail_after(WAIT):
                async with one.gate_for(URL).attempt(10) as slot:
                    slot.report(status=200, retry_after=None, usage_tokens=5)
                assert kept(one) == 1
                gate = two.gate_for(URL)
                async with gate.attempt(10) as slot:
                    gate.learn_limits(hint)
                    slot.report(status=429, retry_after=0.01, usage_tokens=None)
                # Both workers give their kept permits back and ask per attempt again.
                limiter = registry.limiter_for(URL)
                while kept(one, two) or limiter.stats().in_flight:
                    await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
