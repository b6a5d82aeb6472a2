"""Where the SQLite journal's writes run: in the event loop's own thread while the journal's
locks are free, in the writer's thread when another writer holds one, and never in an order
other than the one they were submitted in. The loop never waits on another process."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents._store._batch import Job, try_batch
from corral.agents._store._errors import StoreClosed
from corral.agents._store._schema import connect
from corral.agents._store._writer import Writer
from corral.agents._store._writers_lock import SUFFIX, WritersLock

pytestmark = pytest.mark.anyio

SAFETY = 10.0
"""A lock taken by a test is let go by a timer after this long, so a loop that did wait on it
fails the test's assertions instead of hanging the suite."""


@asynccontextmanager
async def open_writer(journal: Path) -> AsyncIterator[Writer]:
    writer = Writer(connect(journal), WritersLock(journal))
    try:
        yield writer
    finally:
        writer.stop()
        with anyio.fail_after(SAFETY):
            await writer.stopped.wait()


def recording(into: list[tuple[str, int]], name: str) -> Callable[[sqlite3.Connection], None]:
    def operation(conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO runs (run_id, kind, status, created_at, updated_at, config, summary)"
            " VALUES (?, 'exec', 'running', 0, 0, '{}', '{}')",
            (name,),
        )
        into.append((name, threading.get_ident()))

    return operation


@contextmanager
def held(release: Callable[[], None]) -> Iterator[threading.Event]:
    """`release` runs when the block ends, or from a timer after `SAFETY` seconds; the event
    says whether the timer had to."""
    fired = threading.Event()

    def by_timer() -> None:
        fired.set()
        release()

    timer = threading.Timer(SAFETY, by_timer)
    timer.start()
    try:
        yield fired
    finally:
        timer.cancel()
        if not fired.is_set():
            release()


@contextmanager
def writers_lock_held_elsewhere(journal: Path) -> Iterator[threading.Event]:
    fd = os.open(f"{journal}{SUFFIX}", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with held(lambda: os.close(fd)) as fired:
        yield fired


@contextmanager
def sqlite_lock_held_elsewhere(journal: Path) -> Iterator[threading.Event]:
    """A writer that takes SQLite's lock without the writers' lock (an older corral)."""
    other = sqlite3.connect(journal, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")

    def let_go() -> None:
        other.execute("COMMIT")
        other.close()

    with held(let_go) as fired:
        yield fired


def submit(writer: Writer, operation: Callable[[sqlite3.Connection], Any]) -> Job[Any]:
    job: Job[Any] = Job(operation, writes=True)
    writer.submit(job)
    return job


async def test_a_write_with_the_locks_free_runs_in_the_loops_own_thread(tmp_path: Path) -> None:
    done: list[tuple[str, int]] = []
    async with open_writer(tmp_path / "journal.sqlite") as writer:
        job = submit(writer, recording(done, "r1"))
        with anyio.fail_after(SAFETY):
            await job.done
        job.outcome(tmp_path)
    assert done == [("r1", threading.get_ident())]


@pytest.mark.parametrize(
    "holder", [writers_lock_held_elsewhere, sqlite_lock_held_elsewhere], ids=["flock", "sqlite"]
)
async def test_a_write_while_another_writer_holds_a_lock_waits_in_the_writers_thread(
    tmp_path: Path, holder: Callable[[Path], Any]
) -> None:
    journal = tmp_path / "journal.sqlite"
    done: list[tuple[str, int]] = []
    async with open_writer(journal) as writer:
        with holder(journal) as fired:
            first = submit(writer, recording(done, "r1"))
            await anyio.lowlevel.checkpoint()  # the loop's pass that hands the batch over
            await anyio.lowlevel.checkpoint()
            # The loop is free while the write waits, and later writes queue behind it.
            assert not fired.is_set() and not first.done.done()
            second = submit(writer, recording(done, "r2"))
            await anyio.lowlevel.checkpoint()
            assert not second.done.done()
        with anyio.fail_after(SAFETY):
            await first.done
            await second.done
    assert not fired.is_set(), "the loop waited for the other writer"
    assert [name for name, _ in done] == ["r1", "r2"]
    assert all(thread != threading.get_ident() for _, thread in done)


async def test_once_the_writers_thread_is_done_the_loop_runs_writes_itself_again(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite"
    done: list[tuple[str, int]] = []
    async with open_writer(journal) as writer:
        with writers_lock_held_elsewhere(journal):
            waited = submit(writer, recording(done, "r1"))
            await anyio.lowlevel.checkpoint()
        with anyio.fail_after(SAFETY):
            await waited.done
        later = submit(writer, recording(done, "r2"))
        with anyio.fail_after(SAFETY):
            await later.done
    assert done[0][1] != threading.get_ident()
    assert done[1] == ("r2", threading.get_ident())


async def test_a_read_runs_in_the_writers_thread_as_it_may_be_long(tmp_path: Path) -> None:
    async with open_writer(tmp_path / "journal.sqlite") as writer:
        job: Job[int] = Job(lambda conn: threading.get_ident(), writes=False)
        writer.submit(job)
        with anyio.fail_after(SAFETY):
            await job.done
    assert job.outcome(tmp_path) != threading.get_ident()


async def test_an_interrupt_in_the_middle_of_a_write_in_the_loop_keeps_none_of_it(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite"
    conn = connect(journal)
    done: list[tuple[str, int]] = []

    def interrupted(conn: sqlite3.Connection) -> None:
        recording(done, "r2")(conn)
        raise KeyboardInterrupt  # as a second Ctrl-C raises it wherever the loop's thread is

    kept: Job[None] = Job(recording(done, "r1"), writes=True)
    lost: Job[None] = Job(interrupted, writes=True)
    with pytest.raises(KeyboardInterrupt):
        try_batch(conn, [kept, lost])
    assert not conn.in_transaction
    with pytest.raises(StoreClosed, match="interrupted; nothing of it was kept"):
        kept.outcome(journal)
    after: Job[None] = Job(recording(done, "r3"), writes=True)
    assert try_batch(conn, [after])
    assert conn.execute("SELECT run_id FROM runs").fetchall() == [("r3",)]
    conn.close()


async def test_the_wal_is_checkpointed_in_the_writers_thread_never_in_the_loops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corral.agents._store import _writer

    monkeypatch.setattr(_writer, "CHECKPOINT_EVERY", 3)
    checkpoints: list[int] = []
    checkpoint = Writer._checkpoint

    def noted(writer: Writer) -> None:
        checkpoints.append(threading.get_ident())
        checkpoint(writer)

    monkeypatch.setattr(Writer, "_checkpoint", noted)
    journal = tmp_path / "journal.sqlite"
    done: list[tuple[str, int]] = []
    async with open_writer(journal) as writer:
        for name in ("r1", "r2", "r3", "r4"):
            job = submit(writer, recording(done, name))
            with anyio.fail_after(SAFETY):
                await job.done
        automatic = writer._conn.execute("PRAGMA wal_autocheckpoint").fetchone()
    loop = threading.get_ident()
    assert automatic == (0,), "SQLite's own checkpoint would run in whichever thread commits"
    assert [thread == loop for _, thread in done] == [True, True, False, True]
    assert len(checkpoints) == 1 and checkpoints[0] != loop
    reader = sqlite3.connect(journal)
    assert reader.execute("SELECT count(*) FROM runs").fetchone() == (4,)
