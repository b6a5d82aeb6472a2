"""Several OS processes appending to one journal, and (PostgreSQL) connections dropped mid-use.

Every writer's events must all be there once, numbered gap-free per agent (`seq`) and per run
(`run_seq`), each writer's own events in the order it wrote them. A dropped connection is
retried on a new one and never applies a write twice.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import anyio
import psycopg
import pytest

from corral.agents._store import AgentRecord, JournalEvent, RunRecord, Store, Target, open_journal
from corral.agents._store._pg_pool import PgRunner

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

WRITERS = 4
EACH = 40
WAIT = 120
ROOT = Path(__file__).resolve().parents[3]


def agent(agent_id: str) -> AgentRecord:
    return AgentRecord(
        agent_id=agent_id,
        run_id="run-1",
        parent_id=None,
        nickname=agent_id,
        role="worker",
        status="running",
        created_at=1.0,
        updated_at=1.0,
        base_instructions="",
        config={},
    )


async def seed(store: Store, *agent_ids: str) -> None:
    run = RunRecord(
        run_id="run-1", kind="exec", status="running", created_at=1, updated_at=1, config={}
    )
    await store.create_run(run)
    for agent_id in agent_ids:
        await store.create_agent(agent(agent_id))


def check_numbering(events: list[JournalEvent]) -> None:
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_writers_in_separate_processes_neither_lose_duplicate_nor_reorder_events(
    journal: Target | None, store: Store
) -> None:
    if journal is None:
        pytest.skip("the in-memory twin lives in one process")
    writers = [f"w{n}" for n in range(WRITERS)]
    await seed(store, "shared", *writers)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "tests.store._writer", str(journal), "run-1"]
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            for writer in writers:
                cmd = [*argv, writer, str(EACH)]
                tg.start_soon(partial(anyio.run_process, cmd, env=env, cwd=ROOT, check=True))
    shared = await store.events("shared")
    check_numbering(shared)
    for writer in writers:
        own = await store.events(writer)
        check_numbering(own)
        assert [e.payload["n"] for e in own] == list(range(EACH))
        mine = [e.payload["n"] for e in shared if e.payload["writer"] == writer]
        assert mine == list(range(EACH))
    everything = await store.run_events("run-1")
    assert [e.run_seq for e in everything] == list(range(1, 2 * WRITERS * EACH + 1))


def terminate_others(url: str) -> int:
    """Kill every other backend of the test's database, as an administrator or a failover would."""
    sql = (
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        row = conn.execute(sql).fetchone()
    return int(row[0]) if row else 0


async def test_connections_killed_mid_use_are_retried_and_nothing_is_written_twice(
    postgres_url: str,
) -> None:
    tasks, each = 8, 25
    halfway = anyio.Event()
    async with open_journal(postgres_url) as store:
        await seed(store, *(f"a{n}" for n in range(tasks)))

        async def append(agent_id: str) -> None:
            for n in range(each):
                await store.append_event(agent_id, "step", {"n": n}, at=float(n))
                if n == each // 2:
                    halfway.set()

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                for n in range(tasks):
                    tg.start_soon(append, f"a{n}")
                await halfway.wait()
                killed = await anyio.to_thread.run_sync(terminate_others, postgres_url)
        for n in range(tasks):
            events = await store.events(f"a{n}")
            assert [e.payload["n"] for e in events] == list(range(each))
            check_numbering(events)
        everything = await store.run_events("run-1")
        assert [e.run_seq for e in everything] == list(range(1, tasks * each + 1))
    assert killed >= 1


async def test_a_write_retried_after_its_commit_is_answered_from_the_journal_not_redone(
    postgres_url: str,
) -> None:
    async with open_journal(postgres_url) as store:
        await seed(store, "a")
    runner = PgRunner(postgres_url, "the test journal")
    await anyio.to_thread.run_sync(runner.open)
    try:

        def write(conn: psycopg.Connection) -> bool:
            conn.execute(
                "INSERT INTO events (agent_id, seq, kind, payload, at, run_id, run_seq) "
                "VALUES ('a', 1, 'step', '{}', 1.0, 'run-1', 1)"
            )
            return True

        # The same operation id twice: the second stands for a retry whose first commit
        # went through although its connection dropped before the answer came back.
        first = await anyio.to_thread.run_sync(lambda: runner.attempt(write, "op-1", retried=False))
        again = await anyio.to_thread.run_sync(lambda: runner.attempt(write, "op-1", retried=True))
        assert (first, again) == (True, True)
    finally:
        await anyio.to_thread.run_sync(runner.close)
    async with open_journal(postgres_url) as store:
        assert [e.seq for e in await store.events("a")] == [1]
