"""The PostgreSQL store's connections: a pool, one transaction per operation, and retries.

Each operation runs in a worker thread, in one transaction on a pooled connection. When the
connection drops (the server restarted, a proxy cut it, an administrator terminated the backend),
the operation is retried on a new one. A write whose commit outcome is unknown is never applied
twice: every write saves its answer under a fresh id (`applied_ops`) in its own transaction, and
a retry that finds that id answers what was saved instead of writing again.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Final, TypeVar

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectSendStream

from ._errors import JournalFailed, JournalUnreadable, StoreClosed
from ._pg_batch import RETRY_DEADLINE_S, PgJob
from ._pg_errors import first_line, retryable, translate
from ._pg_rows import decode_result, encode_result
from ._targets import describe, need_driver

T = TypeVar("T")

POOL_SIZE: Final = 10
"""Connections per open store; operations beyond it wait for one (each takes milliseconds)."""
CONNECT_TIMEOUT_S: Final = 10
STATEMENT_TIMEOUT_MS: Final = 60_000
"""No statement (a lock wait included) may hang an agent longer than this."""
APPLIED_OPS_KEPT_S: Final = 24 * 3600.0
"""How long a write's saved answer is kept for retries; a retry comes within seconds."""


class PgRunner:
    """Runs operations on a pool of connections to one database, retrying dropped connections."""

    def __init__(self, url: str, label: str, *, read_only: bool = False) -> None:
        from psycopg_pool import ConnectionPool

        # The pool logs a warning per failed connection attempt; the store's own error says
        # what failed (without the URL's password), once.
        logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
        options = f"-c statement_timeout={STATEMENT_TIMEOUT_MS}"
        if read_only:
            options += " -c default_transaction_read_only=on"
        self.label = label
        self.closed = False
        self._limiter = anyio.CapacityLimiter(POOL_SIZE)
        self._writer: MemoryObjectSendStream[PgJob[Any]] | None = None
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_SIZE,
            open=False,
            timeout=RETRY_DEADLINE_S,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S, "options": options},
        )

    def open(self) -> None:
        """Open the pool; an unreachable server or a refused login is `JournalUnreadable`."""
        from psycopg_pool import PoolTimeout

        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except PoolTimeout as exc:
            self._pool.close(timeout=1)
            raise JournalUnreadable(
                f"cannot reach the journal at {self.label} within {CONNECT_TIMEOUT_S} s; "
                "check that the server runs and that the URL, user and password are right"
            ) from exc

    def close(self) -> None:
        self.closed = True
        self._pool.close(timeout=5)

    def stop_writes(self) -> None:
        """Let the writer finish what is queued; later writes raise `StoreClosed`."""
        if self._writer is not None:
            self._writer.close()

    def run_sync(self, operation: Callable[[Any], T], *, writes: bool) -> T:
        """Run `operation(conn)` in one transaction, retrying on a new connection if it drops."""
        import psycopg

        op_id = uuid.uuid4().hex if writes else None
        deadline = time.monotonic() + RETRY_DEADLINE_S
        attempt = 0
        while True:
            try:
                return self.attempt(operation, op_id, retried=attempt > 0)
            except psycopg.Error as exc:
                if not retryable(exc) or time.monotonic() > deadline:
                    raise translate(exc, self.label) from exc
            attempt += 1
            self.recover(attempt)

    def recover(self, attempt: int) -> None:
        """Before a retry: drop the pool's connections that died too, and back off a little."""
        self._pool.check()
        time.sleep(min(0.05 * attempt, 1.0))

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection; none within the deadline is `JournalFailed`."""
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise JournalFailed(
                f"journal {self.label}: no connection within {RETRY_DEADLINE_S:.0f} s "
                "(server down or every connection busy); nothing was written, try again"
            ) from exc

    def attach_writer(self, send: MemoryObjectSendStream[PgJob[Any]]) -> None:
        """Send writes to the group-commit writer (`_pg_batch.write_loop`) from now on."""
        self._writer = send

    async def run(self, operation: Callable[[Any], T], *, writes: bool = True) -> T:
        if self.closed:
            raise StoreClosed(f"journal {self.label} is closed; open it again")
        if writes and self._writer is not None:
            job = PgJob(operation, uuid.uuid4().hex)
            try:
                await self._writer.send(job)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                raise StoreClosed(f"journal {self.label} is closed; open it again") from exc
            await job.done.wait()
            return job.outcome(self.label)
        return await anyio.to_thread.run_sync(
            lambda: self.run_sync(operation, writes=writes), limiter=self._limiter
        )

    def attempt(self, operation: Callable[[Any], T], op_id: str | None, *, retried: bool) -> T:
        """One try of `operation` in one transaction; with `op_id`, saved (or answered from
        what an earlier try saved) so that a retry never applies it twice."""
        with self.connection() as conn, conn.transaction():
            if op_id is not None and retried:
                sql = "SELECT result FROM applied_ops WHERE op_id = %s"
                saved = conn.execute(sql, (op_id,)).fetchone()
                if saved is not None:
                    result: T = decode_result(saved[0])
                    return result
            result = operation(conn)
            if op_id is not None:
                sql = "INSERT INTO applied_ops (op_id, result, at) VALUES (%s, %s, %s)"
                conn.execute(sql, (op_id, encode_result(result), time.time()))
            return result

    def migrate(self, *, target: int | None = None) -> tuple[int, int]:
        """Bring the database to `target` (this code's version); answers (from, to)."""
        import psycopg

        from ._pg_schema import PG_SCHEMA_VERSION, migrate

        self.run_sync(lambda conn: None, writes=False)  # a first connection, with retries
        try:
            with self._pool.connection() as conn:
                return migrate(conn, self.label, target=target or PG_SCHEMA_VERSION)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise JournalUnreadable(
                f"journal {self.label} needs migrating to schema version {PG_SCHEMA_VERSION} and "
                f"this database user may not change its schema ({first_line(exc)}); run "
                "`corral journal migrate` once as the user that owns the journal's tables"
            ) from exc
        except psycopg.Error as exc:
            raise translate(exc, self.label) from exc

    def forget_old_ops(self) -> None:
        """Drop saved answers too old to be asked for again."""
        cutoff = time.time() - APPLIED_OPS_KEPT_S
        self.run_sync(
            lambda conn: conn.execute("DELETE FROM applied_ops WHERE at < %s", (cutoff,)),
            writes=False,
        )


@asynccontextmanager
async def open_pg_runner(url: str, *, read_only: bool = False) -> AsyncIterator[PgRunner]:
    """Connections to the journal at `url`, migrated to this code's schema, closed on exit: for
    the tables kept beside the journal's in its database (`orchestrator.memory`'s). `read_only`
    never writes: the journal must already be at this code's version."""
    from ._pg_schema import check_version

    runner = PgRunner(need_driver(url), describe(url), read_only=read_only)
    await anyio.to_thread.run_sync(runner.open)
    try:
        if read_only:
            await runner.run(lambda conn: check_version(conn, runner.label), writes=False)
        else:
            await anyio.to_thread.run_sync(runner.migrate)
        yield runner
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(runner.close)
