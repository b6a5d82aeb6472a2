"""The permits a worker process asks its parent for: the parent's one limiter per endpoint
decides, so its in-flight cap and its AIMD window are the same numbers for every process.

Both ends run in this test's event loop over a real socket pair, as between two processes.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from anyio.abc import TaskGroup

from corral.agents._config import RateLimit
from corral.agents.model import RateLimitHint
from corral.orchestrator._procs._permits import PermitClient, PermitDesk
from corral.orchestrator._procs._wire import Channel
from corral.orchestrator._ratelimit import RateLimiterRegistry

pytestmark = pytest.mark.anyio
URL = "http://127.0.0.1:9/v1"
WAIT = 10.0


@asynccontextmanager
async def worker_of(registry: RateLimiterRegistry, tg: TaskGroup) -> AsyncIterator[PermitClient]:
    """A worker's permit client wired to the parent's desk over a socket pair."""
    ours, theirs = socket.socketpair()
    parent, worker = await Channel.from_socket(ours), await Channel.from_socket(theirs)
    desk, client = PermitDesk(registry, parent, tg), PermitClient(worker)

    async def parent_reads() -> None:
        async for message in parent.messages():
            (desk.ask if message["op"] == "attempt" else desk.give_back)(message)

    async def worker_reads() -> None:
        async for message in worker.messages():
            client.answer(message)

    for task in (parent.run, worker.run, parent_reads, worker_reads):
        tg.start_soon(task)
    try:
        yield client
    finally:
        await worker.flush_and_close()
        await parent.flush_and_close()


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
                while registry.limiter_for(URL).stats().in_flight:
                    await anyio.wait_all_tasks_blocked()  # the permits travel back
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
                while limiter.stats().in_flight:
                    await anyio.wait_all_tasks_blocked()
            stats = limiter.stats()
        tg.cancel_scope.cancel()
    assert stats.rate_limited == 1
    # Only a 429 that says the limit is used up narrows and pauses every process's attempts.
    assert (stats.window < 8) is narrowed
    assert (stats.paused_for > 0) is narrowed
