"""Journal throughput: events appended per second by 256 concurrent agents, SQLite against
PostgreSQL, and the client CPU each store adds per model turn.

Two loads run on each store, in one client process, all agents in one run (a fan-out):

- `appends`: every agent appends single events as fast as the store takes them;
- `turns`: every agent journals what one model turn with one tool call writes (the response's
  events in one `append_events`, the call's ledger start, its finish with the result event, the
  agent's usage), so `client CPU / turn` is the process CPU time (all threads) over the turns.

PostgreSQL is a throwaway server started by `scripts/postgres` (durable settings: fsync on)
unless `--url` names one; its own CPU is not the client's and is not counted. Run from the
repo root:

    .venv/bin/python -m benchmarks.journal --agents 256 --appends 40 --turns 10
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio

from corral.agents._store import (
    AgentRecord,
    LedgerEntry,
    NewEvent,
    RunRecord,
    Store,
    Target,
    open_journal,
)

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "postgres"
PAYLOAD: dict[str, Any] = {"text": "x" * 600, "usage": {"input_tokens": 1200, "output_tokens": 80}}
RESULT: dict[str, Any] = {"output": "y" * 1500, "success": True}
DEADLINE_S = 900


@dataclass
class Figures:
    store: str
    load: str
    agents: int
    events: int
    seconds: float
    events_per_s: float
    cpu_s: float
    turns: int
    cpu_ms_per_turn: float | None


async def seed(store: Store, agents: int) -> tuple[str, list[str]]:
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    now = time.time()
    run = RunRecord(
        run_id=run_id, kind="fanout", status="running", created_at=now, updated_at=now, config={}
    )
    await store.create_run(run)
    ids = [f"{run_id}-a{n}" for n in range(agents)]
    for agent_id in ids:
        await store.create_agent(
            AgentRecord(
                agent_id=agent_id,
                run_id=run_id,
                parent_id=None,
                nickname=agent_id,
                role="worker",
                status="running",
                created_at=now,
                updated_at=now,
                base_instructions="",
                config={},
            )
        )
    return run_id, ids


async def appends(store: Store, agent_id: str, count: int) -> int:
    for n in range(count):
        await store.append_event(agent_id, "step", {**PAYLOAD, "n": n}, at=time.time())
    return count


async def turns(store: Store, agent_id: str, count: int) -> int:
    for n in range(count):
        now = time.time()
        events: list[NewEvent] = [("response_item", PAYLOAD), ("response_item", {"n": n})]
        await store.append_events(agent_id, events, at=now)
        call = LedgerEntry(
            call_id=f"call_{n}", agent_id=agent_id, tool="shell", arguments="{}", started_at=now
        )
        await store.ledger_start(call)
        result = ("tool_result", RESULT)
        await store.ledger_finish(
            agent_id, call.call_id, output="ok", success=True, at=now, event=result
        )
        await store.update_agent(agent_id, usage={"input_tokens": n, "output_tokens": n})
    return 3 * count


async def measure(name: str, target: Target, load: str, agents: int, each: int) -> Figures:
    work: Callable[[Store, str, int], Awaitable[int]] = appends if load == "appends" else turns
    async with open_journal(target) as store:
        _, ids = await seed(store, agents)
        written: list[int] = []

        async def agent(agent_id: str) -> None:
            written.append(await work(store, agent_id, each))

        cpu, wall = time.process_time(), time.perf_counter()
        with anyio.fail_after(DEADLINE_S):
            async with anyio.create_task_group() as tg:
                for agent_id in ids:
                    tg.start_soon(agent, agent_id)
        seconds, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    events = sum(written)
    n_turns = agents * each if load == "turns" else 0
    per_turn = 1000 * cpu_s / n_turns if n_turns else None
    return Figures(name, load, agents, events, seconds, events / seconds, cpu_s, n_turns, per_turn)


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    folder = Path(tempfile.gettempdir()) / f"corral-bench-pg-{uuid.uuid4().hex[:8]}"
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    try:
        yield started.stdout.strip()
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(folder)], timeout=60, check=False)


@asynccontextmanager
async def targets(url: str | None) -> AsyncIterator[list[tuple[str, Target]]]:
    with tempfile.TemporaryDirectory(prefix="corral-bench-") as folder:
        sqlite = Path(folder) / "journal.sqlite"
        if url is not None:
            yield [("sqlite", sqlite), ("postgresql", url)]
            return
        with throwaway_postgres() as started:
            yield [("sqlite", sqlite), ("postgresql", started)]


async def main(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    async with targets(args.url) as stores:
        for name, target in stores:
            for load, each in (("appends", args.appends), ("turns", args.turns)):
                figures = await measure(name, target, load, args.agents, each)
                rows.append(asdict(figures))
                print(json.dumps(rows[-1]), flush=True)
    return rows


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=256)
    parser.add_argument("--appends", type=int, default=40, help="events per agent")
    parser.add_argument("--turns", type=int, default=10, help="model turns per agent")
    parser.add_argument("--url", help="a PostgreSQL database to use instead of a throwaway one")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse())
