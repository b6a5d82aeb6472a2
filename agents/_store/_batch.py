"""Group commit: the SQLite store's writer runs queued operations in one transaction per batch.

A thread hop and a commit each cost more than a typical journal write, so the writer task takes
every operation waiting at that moment and runs them in one worker-thread call and one
transaction. Operations rarely fail, so a batch first runs them one after the other with nothing
between them; if one fails, the whole transaction is rolled back and the batch runs again with
each operation under its own savepoint, so the one that fails is undone alone and its caller
gets its error (an operation is a function of the database, so running it again after the
rollback does what its first run did). A failed commit fails every operation in the batch.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from ._errors import StoreClosed
from ._schema import BUSY_TIMEOUT_MS, translate

T = TypeVar("T")

MAX_BATCH = 512
"""The most operations one transaction holds, so a long queue still commits in steps."""


class Job(Generic[T]):
    """One store operation: a function of the connection, and what became of it.

    Made in the event loop, whose future `done` the writer settles once the job's batch has
    committed or failed (a bare future: an `anyio.Event` per journal write cost more than the
    write's own Python; the writer is asyncio's alone, as it wakes the loop by its handle)."""

    def __init__(self, operation: Callable[[sqlite3.Connection], T], *, writes: bool) -> None:
        self.operation = operation
        self.writes = writes
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._result: T | None = None
        self._error: BaseException | None = None
        self._settled = False

    def run_plain(self, conn: sqlite3.Connection) -> bool:
        """Run without a savepoint; False (the transaction is spoilt) if the operation failed."""
        try:
            self._result = self.operation(conn)
        except Exception:  # the batch is rolled back and run again, savepoint by savepoint
            return False
        self._settled = True
        return True

    def run(self, conn: sqlite3.Connection) -> None:
        self._settled = True
        conn.execute("SAVEPOINT job")
        try:
            self._result = self.operation(conn)
        except Exception as exc:  # handed to the caller that submitted the job, never dropped
            self._error = exc
            conn.execute("ROLLBACK TO job")
        conn.execute("RELEASE job")

    def fail(self, error: BaseException) -> None:
        self._settled = True
        self._error = error

    def outcome(self, path: Path) -> T:
        """The operation's result, or its error raised as a store error."""
        if not self._settled:
            raise StoreClosed(f"journal {path} stopped before this operation ran; nothing changed")
        error = self._error
        if isinstance(error, sqlite3.Error):
            raise translate(error, path) from error
        if error is not None:
            raise error
        return cast(T, self._result)


def run_batch(conn: sqlite3.Connection, batch: Sequence[Job[Any]]) -> None:
    """Run `batch` in one transaction; called in the writer's thread."""
    # Reads alone need no write lock, so `corral status` never stalls a running journal.
    writes = any(job.writes for job in batch)
    try:
        _begin(conn, writes=writes)
    except sqlite3.Error as exc:
        _fail(conn, batch, exc)
        return
    _run_begun(conn, batch, writes=writes)


def try_batch(conn: sqlite3.Connection, batch: Sequence[Job[Any]]) -> bool:
    """`run_batch`, if the file's write lock is free now; False at once, nothing run, if it
    is not. For the event loop's own thread, which must never wait on another process."""
    writes = any(job.writes for job in batch)
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            _begin(conn, writes=writes)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    except sqlite3.Error:  # busy, or worse: the writer's thread runs it, and waits, or reports
        _roll_back(conn)
        return False
    try:
        _run_begun(conn, batch, writes=writes)
    except BaseException:  # a second Ctrl-C lands in the loop's thread: nothing is kept
        _roll_back(conn)
        for job in batch:
            job.fail(StoreClosed("the journal write was interrupted; nothing of it was kept"))
        raise
    return True


def _run_begun(conn: sqlite3.Connection, batch: Sequence[Job[Any]], *, writes: bool) -> None:
    try:
        if not all(job.run_plain(conn) for job in batch):
            # Savepoints cost two statements per operation: only paid in a batch that needs them.
            if conn.in_transaction:  # an I/O error may have rolled it back already
                conn.execute("ROLLBACK")
            _begin(conn, writes=writes)
            for job in batch:
                job.run(conn)
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        _fail(conn, batch, exc)


def _fail(conn: sqlite3.Connection, batch: Sequence[Job[Any]], error: sqlite3.Error) -> None:
    _roll_back(conn)
    for job in batch:
        job.fail(error)


def _begin(conn: sqlite3.Connection, *, writes: bool) -> None:
    if writes:
        conn.execute("BEGIN IMMEDIATE")
    else:
        conn.execute("BEGIN")


def _roll_back(conn: sqlite3.Connection) -> None:
    # Some errors (disk full, I/O) make SQLite roll back by itself.
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            # A connection that cannot roll back cannot be trusted; later calls fail cleanly.
            conn.close()
