"""`SQLiteStore`: the journal in one SQLite file (WAL), shared safely by tasks and processes.

Each open store has one connection and one writer thread that owns it (`_writer`). Operations
(written once for both databases, `_sql_ops`) queue for the writer, which runs all that are
waiting in one transaction (`_batch`); writes take the lock up front (`BEGIN IMMEDIATE`), so
`seq` stays gap-free even when another process appends to the same journal. Waits are bounded
by SQLite's busy timeout.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from ._batch import Job
from ._errors import StoreClosed
from ._schema import connect, connect_read_only
from ._sql_ops import SqlStore
from ._writer import Writer
from ._writers_lock import WritersLock

T = TypeVar("T")
Sql = sqlite3.Connection


@asynccontextmanager
async def open_sqlite_store(path: Path, *, read_only: bool = False) -> AsyncIterator[SQLiteStore]:
    """Open the journal at `path` (creating it and its folder), and close it on exit.

    `read_only` opens an existing journal without ever writing to it (for the commands that
    only read, so a journal on read-only media can be inspected); writes then fail.
    """
    conn = await anyio.to_thread.run_sync(connect_read_only if read_only else connect, path)
    lock = None if read_only else WritersLock(path)
    store = SQLiteStore(path, Writer(conn, lock))
    try:
        yield store
    finally:
        with anyio.CancelScope(shield=True):
            await store.aclose()


class SQLiteStore(SqlStore):
    """A `Store` in an SQLite file; open it with `open_sqlite_store`."""

    def __init__(self, path: Path, writer: Writer) -> None:
        self.path = path
        self.journal = str(path)
        self._writer = writer
        self._closed = False

    async def aclose(self) -> None:
        """Run what is already queued, then close the connection; later calls raise."""
        if not self._closed:
            self._closed = True
            self._writer.stop()
        await self._writer.stopped.wait()

    async def _call(self, operation: Callable[[Sql], T], *, writes: bool = True) -> T:
        if self._closed:
            raise StoreClosed(f"journal {self.path} is closed; open it again")
        job = Job(operation, writes=writes)
        self._writer.submit(job)
        await job.done
        return job.outcome(self.path)

    async def _write(self, operation: Callable[[Sql], T]) -> T:
        return await self._call(operation)

    async def _read(self, operation: Callable[[Sql], T]) -> T:
        return await self._call(operation, writes=False)
