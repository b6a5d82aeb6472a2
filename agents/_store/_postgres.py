"""`PostgresStore`: the journal in a PostgreSQL database that every machine of a deployment shares.

psycopg 3's synchronous driver and pool run each operation in a worker thread (as the SQLite
store does), one transaction each; that keeps the store independent of the event loop and lets
`_pg_pool` retry a dropped connection without ever applying a write twice. Appends lock their
run's row until commit, so `seq` and `run_seq` stay gap-free and in order however many processes
append at once; other writes rely on row locks, unique keys and (leases) an advisory lock.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, ClassVar, TypeVar

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream

from ._errors import UnknownAgent
from ._pg_batch import PgJob, write_loop
from ._pg_pool import PgRunner
from ._pg_rows import POSTGRES
from ._pg_schema import check_version, redact_url
from ._sql import Dialect
from ._sql_ops import SqlStore
from ._tails import Tail

Conn = Any
T = TypeVar("T")
_TAIL_LOCKED = (
    "SELECT run_id FROM runs WHERE run_id = "
    "(SELECT run_id FROM agents WHERE agent_id = ?) FOR NO KEY UPDATE"
)
_LASTS = (
    "SELECT (SELECT COALESCE(MAX(seq), 0) FROM events WHERE agent_id = ?), "
    "(SELECT COALESCE(MAX(run_seq), 0) FROM events WHERE run_id = ?)"
)


@asynccontextmanager
async def open_postgres_store(url: str, *, read_only: bool = False) -> AsyncIterator[PostgresStore]:
    """Open the journal in the database at `url` (migrating it first), and close it on exit.

    `read_only` never writes: the journal must exist at this code's schema version.
    """
    runner = PgRunner(url, redact_url(url), read_only=read_only)
    await anyio.to_thread.run_sync(runner.open)
    try:
        if read_only:
            await runner.run(lambda conn: check_version(conn, runner.label), writes=False)
        else:
            await anyio.to_thread.run_sync(lambda: _migrate_and_tidy(runner))
    except BaseException:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(runner.close)
        raise
    send, receive = anyio.create_memory_object_stream[PgJob[Any]](0)
    store = PostgresStore(runner)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_writer, runner, receive, store.stopped)
        runner.attach_writer(send)
        try:
            yield store
        finally:
            with anyio.CancelScope(shield=True):
                await store.aclose()


async def _writer(
    runner: PgRunner, receive: MemoryObjectReceiveStream[PgJob[Any]], stopped: anyio.Event
) -> None:
    try:
        await write_loop(runner, receive)
    finally:
        stopped.set()


def _migrate_and_tidy(runner: PgRunner) -> None:
    runner.migrate()
    runner.forget_old_ops()


def _run_lock(run_id: str) -> int:
    # A signed 64-bit key per run; two runs sharing one only wait for each other.
    # `surrogatepass`: a run id from a model's JSON may hold a lone surrogate.
    key = hashlib.blake2b(run_id.encode(errors="surrogatepass"), digest_size=8).digest()
    return int.from_bytes(key, signed=True)


class PostgresStore(SqlStore):
    """A `Store` in a PostgreSQL database; open it with `open_postgres_store`."""

    dialect: ClassVar[Dialect] = POSTGRES

    def __init__(self, runner: PgRunner) -> None:
        self.journal = runner.label
        self.stopped = anyio.Event()
        self._runner = runner

    def _tail(self, conn: Conn, agent_id: str) -> Tail:
        """The agent's run, its last seq and the run's, with the run's row locked until commit.

        The lock serialises the run's appenders (in every process), so `seq` and `run_seq` are
        read after the previous appender committed: gap-free, never taken twice.
        """
        found = self.dialect.rows(conn, _TAIL_LOCKED, (agent_id,))
        if not found:
            raise UnknownAgent(agent_id, self.journal)
        run_id = str(found[0][0])
        # Read after the lock is held, so in a statement (and a snapshot) of its own.
        ((last, last_in_run),) = self.dialect.rows(conn, _LASTS, (agent_id, run_id))
        return Tail(run_id, int(last), int(last_in_run))

    def _lock_run(self, conn: Conn, run_id: str) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_run_lock(run_id),))

    async def aclose(self) -> None:
        """Run the writes already queued, then close the pool; later calls raise `StoreClosed`.
        Closing twice is harmless."""
        with anyio.CancelScope(shield=True):
            self._runner.stop_writes()
            await self.stopped.wait()
            if not self._runner.closed:
                await anyio.to_thread.run_sync(self._runner.close)

    async def _write(self, operation: Callable[[Conn], T]) -> T:
        return await self._runner.run(operation)

    async def _read(self, operation: Callable[[Conn], T]) -> T:
        return await self._runner.run(operation, writes=False)
