"""A separate process that appends to a journal, for the conformance suite's multi-process test.

    python -m tests.store._writer TARGET RUN AGENT COUNT

Appends COUNT events to its own agent AGENT and COUNT to the run's agent `shared`, alternating,
each payload naming the writer and its position, so the test can check order per writer.
"""

from __future__ import annotations

import sys

import anyio

from corral.agents._store import open_journal, parse_target


async def main(target: str, agent: str, count: int) -> None:
    async with open_journal(parse_target(target)) as store:
        for n in range(count):
            await store.append_event(agent, "step", {"writer": agent, "n": n}, at=float(n))
            await store.append_event("shared", "step", {"writer": agent, "n": n}, at=float(n))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[3], int(sys.argv[4]))
