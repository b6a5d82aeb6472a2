"""The SQLite store's writer: runs queued jobs on the connection, in the event loop's thread
when that never waits, else in a thread of its own.

Callers queue jobs without waiting for anything; the jobs of one pass of the event loop are
gathered into one batch, run in one transaction. When the batch only writes (a read may be long:
a whole run's events), nothing is queued for the thread, and the journal's locks are free at
that moment (the writers' lock taken without waiting, SQLite's with no busy timeout), the loop
runs the batch itself: a transaction of a few hundred microseconds,
with no hand-over to a thread and back. In a thread, each SQLite call gives the interpreter's
lock up and must win it back from a busy loop, so a transaction held the journal's lock several
times longer than its own work while another process waited for it (docs/performance.md).
Otherwise the batch goes to the writer's thread, which may wait for the locks (bounded by the
busy timeout), runs every batch waiting at that moment in one transaction (`run_batch`), and
wakes their callers with one call into the event loop.

SQLite's automatic checkpoint is off on this connection: every `CHECKPOINT_EVERY` batches, one
goes to the thread, which checkpoints after it, so no `fsync` of a checkpoint lands on the loop.

A queued job always runs, even if its caller was cancelled (journaling a cancelled run's
interruption must still reach the file); jobs run in the order they were submitted (the loop
runs a batch only when the thread has none left). The thread stops, closing the connection,
once `stop` is called and the queue is drained.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

import anyio

from ._batch import MAX_BATCH, Job, run_batch, try_batch
from ._schema import BUSY_TIMEOUT_MS
from ._writers_lock import WritersLock

_STOP = None
"""Queued after the last jobs by `stop`."""
LOCK_DEADLINE = BUSY_TIMEOUT_MS / 1000
"""Seconds a batch waits for the writers' lock before it goes on to SQLite's own lock."""
CHECKPOINT_EVERY = 100
"""Batches between two checkpoints of the WAL into the journal. SQLite's automatic checkpoint
is off on the writer's connection, since a commit in the loop's thread would run it there,
`fsync` and all; every so many batches one goes to the writer's thread, which checkpoints
after it (passive: it never waits for readers)."""


class Writer:
    """Runs `Job`s on `conn`, in the loop's thread or its own, in the order they were submitted."""

    def __init__(self, conn: sqlite3.Connection, lock: WritersLock | None = None) -> None:
        self._conn = conn
        self._lock = lock
        self._loop = asyncio.get_running_loop()
        self._queue: queue.SimpleQueue[list[Job[Any]] | None] = queue.SimpleQueue()
        self._gathering: list[Job[Any]] = []
        self._in_thread = 0
        """Jobs handed to the thread and not yet settled: the loop runs none while any are."""
        self._stopping = False
        self._batches = 0
        self._checkpoint_due = threading.Event()
        if lock is not None:  # a writable journal
            conn.execute("PRAGMA wal_autocheckpoint = 0")
        self.stopped = anyio.Event()
        self._thread = threading.Thread(target=self._serve, name="corral-journal", daemon=True)
        self._thread.start()

    def submit(self, job: Job[Any]) -> None:
        """Queue `job`; its `done` future is settled once its batch committed or failed.

        Called in the event loop. The jobs submitted during one pass of the loop go to the
        thread together, at the start of the next: many agents answered in the same pass
        write in one transaction, and the thread is woken once for them, not once each."""
        self._gathering.append(job)
        if len(self._gathering) == 1:
            self._loop.call_soon(self._hand_over)

    def stop(self) -> None:
        """Run what is queued, then close the connection and set `stopped`."""
        self._stopping = True
        self._hand_over()
        self._queue.put(_STOP)

    def _hand_over(self) -> None:
        if not self._gathering:
            return
        jobs, self._gathering = self._gathering, []
        self._batches += 1
        if self._batches >= CHECKPOINT_EVERY:
            self._batches = 0
            self._checkpoint_due.set()  # this batch goes to the thread, which checkpoints
        elif not self._stopping and self._in_thread == 0:
            try:
                ran = self._run_here(jobs)
            except BaseException:
                _settle([job.done for job in jobs])  # each job says it failed
                raise
            if ran:
                _settle([job.done for job in jobs])
                return
        self._in_thread += len(jobs)
        self._queue.put(jobs)

    def _run_here(self, batch: list[Job[Any]]) -> bool:
        """Run `batch` now, in the loop's thread, if it only writes and neither lock is held
        elsewhere. Reads stay in the thread: one may be long (a whole run's events)."""
        lock = self._lock
        if lock is None or not all(job.writes for job in batch) or not lock.try_acquire():
            return False
        try:
            return try_batch(self._conn, batch)
        finally:
            lock.release()

    def _serve(self) -> None:
        try:
            stopping = False
            while not stopping:
                batch, stopping = self._next_batch()
                if batch:
                    try:
                        self._run(batch)
                        if self._checkpoint_due.is_set():
                            self._checkpoint_due.clear()
                            self._checkpoint()
                    finally:
                        self._wake(batch)
        finally:
            # Whatever is still queued never ran: its callers hear that the journal stopped.
            self._wake(self._leftovers())
            self._conn.close()
            if self._lock is not None:
                self._lock.close()
            self._wake(None)

    def _run(self, batch: list[Job[Any]]) -> None:
        """`batch` in one transaction, holding the writers' lock if it writes (`_writers_lock`)."""
        lock = self._lock if any(job.writes for job in batch) else None
        held = lock is not None and lock.acquire(LOCK_DEADLINE)
        try:
            run_batch(self._conn, batch)
        finally:
            if held and lock is not None:
                lock.release()

    def _checkpoint(self) -> None:
        """Copy the WAL's committed pages into the journal, as far as readers allow; before the
        batch's callers are woken, so the loop runs no transaction meanwhile."""
        with contextlib.suppress(sqlite3.Error):  # a failed checkpoint loses nothing; retried
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _next_batch(self) -> tuple[list[Job[Any]], bool]:
        """The jobs waiting now (at least one unless stopping), and whether `stop` came."""
        first = self._queue.get()
        if first is None:
            return [], True
        batch = list(first)
        while len(batch) < MAX_BATCH:
            try:
                jobs = self._queue.get_nowait()
            except queue.Empty:
                break
            if jobs is None:
                return batch, True
            batch += jobs
        return batch, False

    def _leftovers(self) -> list[Job[Any]]:
        jobs: list[Job[Any]] = []
        while True:
            try:
                more = self._queue.get_nowait()
            except queue.Empty:
                return jobs
            jobs += more or ()

    def _wake(self, batch: Sequence[Job[Any]] | None) -> None:
        """Settle the `done` of each job of `batch` in the loop; None: set `stopped`."""
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is left to wake
            if batch is None:
                self._loop.call_soon_threadsafe(self.stopped.set)
            else:
                self._loop.call_soon_threadsafe(self._settled, [job.done for job in batch])

    def _settled(self, futures: Sequence[asyncio.Future[None]]) -> None:
        self._in_thread -= len(futures)
        _settle(futures)


def _settle(futures: Sequence[asyncio.Future[None]]) -> None:
    for future in futures:
        if not future.done():  # a cancelled caller's future is cancelled; its job still ran
            future.set_result(None)
