"""Blobs in the journal's PostgreSQL database, so a worker on any machine reads what another
wrote, and they go when their run goes.

Two tables beside the journal's: `blobs` (bytea under the SHA-256 key) and `blob_refs` (which
runs reference which blob), made by the journal's migrations (`agents._store._pg_schema`, version
2); a store's first use migrates a database that is not there yet. Every operation opens its own
short connection: payloads travel by reference only from 256 KiB, so a connection per blob
costs little, and the codec, which Temporal keeps for the life of a client, holds nothing open.
At most `MAX_CONNECTIONS` are open at once per store, so a worker with hundreds of agents whose
requests all go by reference does not exhaust the server's connections.
A connection that drops is retried on a new one; every write is idempotent (content-addressed
inserts that do nothing twice), so a retry after an unknown outcome is safe.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import anyio

from ._blobs import NO_RUN, check_key
from ._errors import PayloadBlobError

T = TypeVar("T")

CONNECT_TIMEOUT_S: Final = 10
RETRY_DEADLINE_S: Final = 30.0
"""How long an operation keeps retrying on new connections before it fails."""
STATEMENT_TIMEOUT_MS: Final = 60_000
MAX_CONNECTIONS: Final = 8
"""Blob operations in flight at once per store (per process); the rest wait their turn."""
_DELETE_REFS: Final = "DELETE FROM blob_refs WHERE run_id = %s RETURNING sha256"
# Locked in key order (two deletes never deadlock); the next statement sees, after the locks,
# every reference a concurrent put committed, so a referenced blob is never deleted.
_LOCK_BLOBS: Final = "SELECT sha256 FROM blobs WHERE sha256 = ANY(%s) ORDER BY sha256 FOR UPDATE"
_DELETE_ORPHANS: Final = """
DELETE FROM blobs b WHERE b.sha256 = ANY(%s)
AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256)
"""


class PostgresBlobStore:
    """The `BlobStore` in the PostgreSQL database at `url`; `label` (the URL without its
    password) names it in messages."""

    def __init__(self, url: str, label: str) -> None:
        self._url = url
        self._label = label
        self._ready = False
        self._slots: anyio.Semaphore | None = None
        """Made on first use, in the event loop that uses it (and `_schema` with it)."""
        self._schema: anyio.Lock | None = None

    @property
    def where(self) -> str:
        return f"the blobs table of {self._label}"

    async def put(self, key: str, data: bytes, *, run_id: str | None = None) -> None:
        check_key(key)
        if run_id is not None and "\x00" in run_id:
            raise PayloadBlobError(f"a run id cannot hold a NUL character: {run_id!r}")

        async def insert(conn: Any) -> None:
            # The FK check of the reference locks the blob row, so a concurrent delete of the
            # last other run either waits for this one or has deleted it (and we insert again).
            sql = (
                "INSERT INTO blobs (sha256, data, size, created_at) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (sha256) DO NOTHING"
            )
            await conn.execute(sql, (key, data, len(data), time.time()))
            sql = "INSERT INTO blob_refs (run_id, sha256) VALUES (%s, %s) ON CONFLICT DO NOTHING"
            await conn.execute(sql, (run_id or NO_RUN, key))

        await self._run(insert)

    async def get(self, key: str) -> bytes | None:
        check_key(key)

        async def select(conn: Any) -> bytes | None:
            cursor = await conn.execute("SELECT data FROM blobs WHERE sha256 = %s", (key,))
            row = await cursor.fetchone()
            return None if row is None else bytes(row[0])

        return await self._run(select)

    async def delete_run(self, run_id: str) -> int:
        if run_id == NO_RUN or "\x00" in run_id:  # no run has such an id
            return 0

        async def delete(conn: Any) -> int:
            cursor = await conn.execute(_DELETE_REFS, (run_id,))
            keys = sorted({row[0] for row in await cursor.fetchall()})
            if not keys:
                return 0
            await conn.execute(_LOCK_BLOBS, (keys,))
            cursor = await conn.execute(_DELETE_ORPHANS, (keys,))
            deleted: int = cursor.rowcount
            return deleted

        return await self._run(delete)

    async def _run(self, operation: Callable[[Any], Awaitable[T]]) -> T:
        """`operation(conn)` in one transaction, retried on a new connection if it drops."""
        import psycopg

        if self._slots is None:
            self._slots = anyio.Semaphore(MAX_CONNECTIONS)
            self._schema = anyio.Lock()
        await self._need_schema()
        deadline = time.monotonic() + RETRY_DEADLINE_S
        attempt = 0
        while True:
            try:
                async with self._slots:
                    return await self._attempt(operation)
            except psycopg.Error as exc:
                if not _retryable(exc) or time.monotonic() > deadline:
                    raise PayloadBlobError(
                        f"the blob store in {self._label} failed ({_first_line(exc)}); "
                        "check that the journal's database is reachable"
                    ) from exc
            attempt += 1
            await anyio.sleep(min(0.05 * attempt, 1.0))  # back off before reconnecting

    async def _need_schema(self) -> None:
        """Migrate the journal once, if its blob tables are not there yet (the first store to
        reach a new database); a journal already at this corral's version is only read."""
        from corral.agents._store import StoreError, migrate_journal

        assert self._schema is not None
        async with self._schema:
            if self._ready:
                return
            try:
                await migrate_journal(self._url)
            except StoreError as exc:
                raise PayloadBlobError(
                    f"the blob store in {self._label} cannot use the journal's tables: {exc}"
                ) from exc
            self._ready = True

    async def _attempt(self, operation: Callable[[Any], Awaitable[T]]) -> T:
        import psycopg

        options = f"-c statement_timeout={STATEMENT_TIMEOUT_MS}"
        with anyio.fail_after(CONNECT_TIMEOUT_S + STATEMENT_TIMEOUT_MS / 1000):
            async with (
                await psycopg.AsyncConnection.connect(
                    self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, options=options
                ) as conn,
                conn.transaction(),
            ):
                return await operation(conn)


def _retryable(exc: BaseException) -> bool:
    import psycopg
    from psycopg import errors

    if isinstance(
        exc,
        errors.SerializationFailure
        | errors.DeadlockDetected
        | errors.ForeignKeyViolation  # the blob was deleted under a put: insert it again
        | errors.AdminShutdown
        | errors.CannotConnectNow
        | errors.TooManyConnections,  # the server is full for a moment: wait and try again
    ):
        return True
    # A connection error leaves no SQLSTATE; an error the server sent about the query has one.
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError) and not getattr(
        exc, "sqlstate", None
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
