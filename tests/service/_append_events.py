"""Another process appending to a journal: `python -m tests.service._append_events JOURNAL
AGENT COUNT [finish]` appends COUNT events to the agent's journal, one transaction each (with
`finish`, then calls its run done), and prints `done`. JOURNAL is an SQLite file or a
PostgreSQL URL."""

from __future__ import annotations

import sys

import anyio

from corral.agents import Store
from corral.agents._store import open_journal


async def append(store: Store, agent_id: str, count: int) -> None:
    for n in range(count):
        await store.append_event(agent_id, "note", {"n": n}, at=float(n))


async def main(journal: str, agent_id: str, count: int, finish: bool) -> None:
    async with open_journal(journal) as store:
        await append(store, agent_id, count)
        agent = await store.get_agent(agent_id)
        if finish and agent is not None:
            await store.update_run(agent.run_id, status="done", updated_at=float(count))
    print("done", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:] == ["finish"])
