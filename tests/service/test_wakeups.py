"""Followers of a run see what any process appends: a wake-up says "read now", the journal
says what, so a lost wake-up costs latency and never an event."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import anyio
import pytest

from corral.agents import Store, open_sqlite_store
from corral.agents._store import open_journal
from corral.orchestrator.runs import JOURNAL_NAME
from corral.orchestrator.service import CorralClient, CorralService, ServerEvent, ServiceOptions
from corral.orchestrator.service._events import EventLog
from corral.orchestrator.service._wakeups import LocalWakeups, Wakeups, open_wakeups
from corral.orchestrator.service._wakeups_postgres import APPLICATION_NAME
from tests._journal import seed_agent

pytestmark = pytest.mark.anyio

WAIT = 60.0
TOKEN = "a-test-token-that-is-long-enough"
ROOT = Path(__file__).resolve().parents[2]


def append_elsewhere(
    journal: str | Path, agent_id: str, count: int, *, finish: bool = False
) -> None:
    """Append `count` events to the agent's journal from another OS process; with `finish`,
    then call its run done."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "tests.service._append_events", str(journal), agent_id]
    argv += [str(count), *(["finish"] if finish else [])]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=WAIT, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr


async def test_a_notify_wakes_the_waiter_taken_before_it_and_no_later_one() -> None:
    wakeups = LocalWakeups()
    early = wakeups.waiter("run-a")
    other = wakeups.waiter("run-b")
    wakeups.notify("run-a")
    assert early.is_set() and not other.is_set()
    assert not wakeups.waiter("run-a").is_set()


async def test_a_commit_by_another_process_wakes_the_sqlite_journals_waiters(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite"
    async with open_sqlite_store(journal) as store:
        await seed_agent(store, "agent-1", "run-1")
        async with open_wakeups(journal) as wakeups:
            woken = wakeups.waiter("run-1")
            idle = wakeups.waiter("run-2")
            await anyio.to_thread.run_sync(append_elsewhere, journal, "agent-1", 1)
            with anyio.fail_after(WAIT):
                await woken.wait()
            assert not idle.is_set()


@asynccontextmanager
async def following(store: Store, run_id: str, wakeups: Wakeups) -> AsyncIterator[EventLog]:
    """An `EventLog` following the run while the block runs."""
    log, stopped = EventLog(), anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(log.follow, store, run_id, stopped.is_set, wakeups)
        yield log
        stopped.set()
        wakeups.notify(run_id)


async def wait_for(log: EventLog, count: int) -> None:
    with anyio.fail_after(WAIT):
        while len(log.events) < count:
            await log.wait_beyond(len(log.events), WAIT)


async def test_a_follower_sees_every_event_another_process_appends_in_order(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite"
    async with open_sqlite_store(journal) as store:
        await seed_agent(store, "agent-1", "run-1")
        async with open_wakeups(journal) as wakeups, following(store, "run-1", wakeups) as log:
            await anyio.to_thread.run_sync(append_elsewhere, journal, "agent-1", 40)
            await wait_for(log, 40)
    assert [e.id for e in log.events] == list(range(1, 41))
    assert [e.payload["n"] for e in log.events] == list(range(40))


async def test_a_follower_that_is_never_woken_still_sees_every_event(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    async with open_sqlite_store(journal) as store:
        await seed_agent(store, "agent-1", "run-1")
        deaf = LocalWakeups()  # no notification ever arrives: the periodic re-read finds all
        async with following(store, "run-1", deaf) as log:
            await anyio.to_thread.run_sync(append_elsewhere, journal, "agent-1", 25)
            await wait_for(log, 25)
    assert [e.payload["n"] for e in log.events] == list(range(25))


@asynccontextmanager
async def seeded_postgres(url: str) -> AsyncIterator[Store]:
    async with open_journal(url) as store:
        await seed_agent(store, "agent-1", "run-1")
        yield store


async def test_an_append_by_another_process_notifies_the_postgres_journals_waiters(
    postgres_url: str,
) -> None:
    async with seeded_postgres(postgres_url), open_wakeups(postgres_url) as wakeups:
        woken = wakeups.waiter("run-1")
        idle = wakeups.waiter("run-2")
        await anyio.to_thread.run_sync(append_elsewhere, postgres_url, "agent-1", 1)
        with anyio.fail_after(WAIT):
            await woken.wait()
        assert not idle.is_set()


def kill_listener(url: str) -> int:
    """Terminate the wake-ups' LISTEN connection, as a failover or a proxy would; answers how
    many were killed."""
    import psycopg

    sql = (
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE application_name = %s AND datname = current_database()"
    )
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        row = conn.execute(sql, (APPLICATION_NAME,)).fetchone()
    return int(row[0]) if row else 0


async def test_a_follower_on_postgres_sees_every_event_even_after_its_listener_is_killed(
    postgres_url: str,
) -> None:
    async with (
        seeded_postgres(postgres_url) as store,
        open_wakeups(postgres_url) as wakeups,
        following(store, "run-1", wakeups) as log,
    ):
        await anyio.to_thread.run_sync(append_elsewhere, postgres_url, "agent-1", 20)
        await wait_for(log, 20)
        assert await anyio.to_thread.run_sync(kill_listener, postgres_url) == 1
        await anyio.to_thread.run_sync(append_elsewhere, postgres_url, "agent-1", 20)
        await wait_for(log, 40)
    assert [e.id for e in log.events] == list(range(1, 41))
    assert [e.payload["n"] for e in log.events] == list(range(20)) * 2


async def test_the_apis_stream_of_a_run_another_process_executes_follows_it_to_its_end(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    async with open_sqlite_store(home / JOURNAL_NAME) as store:
        await seed_agent(store, "agent-1", "run-1")
    options = ServiceOptions(home=home, token=TOKEN, port=0, env={"CORRAL_HOME": str(home)})
    async with anyio.create_task_group() as tg:
        url = await tg.start(CorralService(options).run)
        async with CorralClient(url, TOKEN) as client:
            events: list[ServerEvent] = []

            async def read() -> None:
                with anyio.fail_after(WAIT):
                    events.extend([e async for e in client.events("run-1")])

            async with anyio.create_task_group() as reading:
                reading.start_soon(read)
                await anyio.to_thread.run_sync(
                    partial(append_elsewhere, home / JOURNAL_NAME, "agent-1", 30, finish=True)
                )
        tg.cancel_scope.cancel()
    assert [e.data["payload"]["n"] for e in events if e.id] == list(range(30))
    assert [e.id for e in events if e.id] == list(range(1, 31))
    assert (events[-1].event, events[-1].data["status"]) == ("end", "done")


def limited_user(url: str) -> str:
    """The URL of a user who may read and write the journal's rows but create nothing, nor own
    (or alter) its tables."""
    import psycopg

    role = f"corral_app_{uuid.uuid4().hex[:12]}"  # roles are the server's, not the database's
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        conn.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        tables = "SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public"
        conn.execute(f"GRANT {tables} TO {role}")
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}"))


async def test_a_user_who_may_only_read_and_write_rows_follows_every_event(
    postgres_url: str,
) -> None:
    # The owner's migration installed the trigger; the listener needs no right beyond LISTEN.
    async with seeded_postgres(postgres_url):
        pass
    limited = await anyio.to_thread.run_sync(limited_user, postgres_url)
    async with (
        open_journal(limited) as store,
        open_wakeups(limited) as wakeups,
        following(store, "run-1", wakeups) as log,
    ):
        await anyio.to_thread.run_sync(append_elsewhere, postgres_url, "agent-1", 5)
        await wait_for(log, 5)
    assert [e.payload["n"] for e in log.events] == list(range(5))


async def test_a_waiter_nobody_holds_any_more_is_no_longer_watched() -> None:
    wakeups = LocalWakeups()
    kept = wakeups.waiter("run-kept")
    wakeups.waiter("run-gone")  # its follower went away without being woken
    assert wakeups.watched == ["run-kept"]
    wakeups.notify("run-kept")
    assert kept.is_set() and wakeups.watched == []
