"""What a rate-limit permit costs a fan-out across processes: CPU per attempt, with and without
leases, both ends of the channel in this process over a real socket pair.

`lease`: the limiter lends (no bucket), so a worker keeps permits between attempts and only
reports each attempt; `per attempt`: a requests-per-minute bucket too high to bind, which stops
lending, so every attempt asks the parent and waits for its grant (the protocol before leases).

    .venv/bin/python -m benchmarks.permits --agents 128 --attempts 40 --repeat 3

`worker_of` wires the two ends; `tests/orchestrator/test_procs_permits.py` uses it too.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from corral.agents._config import RateLimit
from corral.orchestrator._procs._permits import PermitClient, PermitDesk
from corral.orchestrator._procs._wire import Channel
from corral.orchestrator._ratelimit import RateLimiterRegistry

URL = "http://127.0.0.1:9/v1"
LIMITS = {"lease": RateLimit(), "per attempt": RateLimit(requests_per_minute=10**9)}


@asynccontextmanager
async def worker_of(
    registry: RateLimiterRegistry, tg: TaskGroup, seen: list[str] | None = None
) -> AsyncIterator[PermitClient]:
    """A worker's permit client wired to the parent's desk over a socket pair, both ends
    served in `tg`; `seen` gets the op of every message the parent receives."""
    ours, theirs = socket.socketpair()
    parent, worker = await Channel.from_socket(ours), await Channel.from_socket(theirs)
    desk, client = PermitDesk(registry, parent, tg), PermitClient(worker)

    async def parent_reads() -> None:
        handlers = {"attempt": desk.ask, "used": desk.used, "release": desk.give_back}
        async for message in parent.messages():
            if seen is not None:
                seen.append(message["op"])
            handlers[message["op"]](message)

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


async def measure(limit: RateLimit, agents: int, attempts: int) -> float:
    """Process CPU microseconds per attempt, both ends together."""
    registry = RateLimiterRegistry({"default": limit})
    async with anyio.create_task_group() as tg, worker_of(registry, tg) as client:

        async def agent() -> None:
            for _ in range(attempts):
                async with client.gate_for(URL).attempt(1000) as slot:
                    await anyio.lowlevel.checkpoint()  # the request is in flight elsewhere
                    slot.report(status=200, retry_after=None, usage_tokens=900)

        cpu = time.process_time()
        with anyio.fail_after(600):
            async with anyio.create_task_group() as agents_group:
                for _ in range(agents):
                    agents_group.start_soon(agent)
        cpu = time.process_time() - cpu
        tg.cancel_scope.cancel()
    return 1e6 * cpu / (agents * attempts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=128)
    parser.add_argument("--attempts", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs: dict[str, list[float]] = {name: [] for name in LIMITS}
    for _ in range(args.repeat):
        for name, limit in LIMITS.items():
            runs[name].append(anyio.run(measure, limit, args.agents, args.attempts))
    print(f"{args.agents} agents x {args.attempts} attempts; medians of {args.repeat}")
    for name, values in runs.items():
        print(f"{name:<12} {statistics.median(values):8.1f} us CPU per attempt (both ends)")


if __name__ == "__main__":
    main()
