"""The server's own record of the runs it accepted, so a restart knows what it still owes.

A 202 is a promise: the run will be carried out even if the server dies before it starts. Each
accepted request is written here (with its folder resolved, its `Idempotency-Key` and a hash of
the request as sent, so a key reused with another request is told apart) before the server
answers, and marked finished once the run reached a final word (with whether the journal held
it then). At start, every submission not finished is either carried on or marked interrupted
(`[service] on_restart`). A run deleted from the journal since (`corral journal delete`) is
forgotten here too (`forget`), so its Idempotency-Key starts a new run.
The book is a small SQLite file next to the journal; it never holds secrets, since model keys
come from the server's environment and requests cannot carry them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import anyio

from corral.tools import OperationFailed

from ._errors import IdempotencyConflict

T = TypeVar("T")

BOOK_NAME: Final = "service.sqlite"
BUSY_TIMEOUT_MS: Final = 10_000
MAX_KEY_LENGTH: Final = 255
"""The longest `Idempotency-Key` taken."""

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS submissions (
    run_id TEXT PRIMARY KEY,
    idempotency_key TEXT UNIQUE,
    request TEXT NOT NULL,
    created_at REAL NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0,
    outcome TEXT,
    request_hash TEXT
)
"""
# Books written before requests were hashed lack the column; their keys match any request.
# Books written before runs could be deleted lack `journaled`: NULL reads as "it was".
_MIGRATIONS: Final = {
    "request_hash": "ALTER TABLE submissions ADD COLUMN request_hash TEXT",
    "journaled": "ALTER TABLE submissions ADD COLUMN journaled INTEGER",
}
_COLUMNS: Final = (
    "SELECT run_id, idempotency_key, request, created_at, request_hash, finished, journaled"
    " FROM submissions"
)


class SubmissionBookFailed(OperationFailed):
    """The server could not read or write its record of accepted runs."""


@dataclass(frozen=True)
class Submission:
    run_id: str
    key: str | None
    request: dict[str, Any]
    created_at: float
    fingerprint: str | None = None
    """The hash of the request as the client sent it (`request_fingerprint`)."""
    finished: bool = False
    journaled: bool = True
    """Whether the journal held the run when it finished (a run cancelled while it was queued
    never reached it): one that did and no longer does was deleted."""


class SubmissionBook:
    """Accepted runs on disk; one connection, used from worker threads one call at a time."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self._path = path
        self._lock = anyio.Lock()

    async def add(self, submission: Submission) -> None:
        row = (
            submission.run_id,
            submission.key,
            json.dumps(submission.request),
            submission.created_at,
            submission.fingerprint,
        )
        sql = (
            "INSERT INTO submissions (run_id, idempotency_key, request, created_at, request_hash) "
            "VALUES (?, ?, ?, ?, ?)"
        )
        await self._run(lambda conn: conn.execute(sql, row))

    async def finish(self, run_id: str, outcome: str, *, journaled: bool = True) -> None:
        sql = "UPDATE submissions SET finished = 1, outcome = ?, journaled = ? WHERE run_id = ?"
        await self._run(lambda conn: conn.execute(sql, (outcome, int(journaled), run_id)))

    async def forget(self, run_id: str) -> None:
        """Drop the run's submission (it was deleted from the journal), its key with it."""
        sql = "DELETE FROM submissions WHERE run_id = ?"
        await self._run(lambda conn: conn.execute(sql, (run_id,)))

    async def for_key(self, key: str) -> Submission | None:
        """The submission made with `Idempotency-Key` `key`, if any."""
        sql = f"{_COLUMNS} WHERE idempotency_key = ?"
        row = await self._run(lambda conn: conn.execute(sql, (key,)).fetchone())
        return None if row is None else _submission(row)

    async def get(self, run_id: str) -> Submission | None:
        sql = f"{_COLUMNS} WHERE run_id = ?"
        row = await self._run(lambda conn: conn.execute(sql, (run_id,)).fetchone())
        return None if row is None else _submission(row)

    async def unfinished(self) -> list[Submission]:
        """Accepted runs with no final word yet, oldest first."""
        sql = f"{_COLUMNS} WHERE finished = 0 ORDER BY created_at, rowid"
        rows = await self._run(lambda conn: conn.execute(sql).fetchall())
        return [_submission(row) for row in rows]

    async def _run(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        def guarded() -> T:
            try:
                with self._conn:
                    return operation(self._conn)
            except sqlite3.Error as exc:
                raise SubmissionBookFailed(
                    f"the service's record of accepted runs ({self._path}) failed: {exc}"
                ) from exc

        async with self._lock:
            return await anyio.to_thread.run_sync(guarded)


def same_request(key: str, run_id: str, first: str | None, now: str) -> str:
    """`run_id` if the request is the one `key` was first used with (IETF idempotency draft);
    `IdempotencyConflict` if it is another. `first` and `now` are `request_fingerprint`s."""
    if first is not None and first != now:  # None: kept before requests were hashed
        raise IdempotencyConflict(
            f"Idempotency-Key {key!r} was used for a different request (run {run_id}); send "
            "that same request to get its run, or use a new key for a new one"
        )
    return run_id


def _submission(row: tuple[Any, ...]) -> Submission:
    run_id, key, request, created_at, fingerprint, finished, journaled = row
    return Submission(
        str(run_id),
        key,
        json.loads(request),
        float(created_at),
        fingerprint,
        finished=bool(finished),
        journaled=journaled is None or bool(journaled),
    )


@asynccontextmanager
async def open_submission_book(home: Path) -> AsyncIterator[SubmissionBook]:
    path = home / BOOK_NAME
    conn = await anyio.to_thread.run_sync(_connect, path)
    try:
        yield SubmissionBook(conn, path)
    finally:
        conn.close()


def _connect(path: Path) -> sqlite3.Connection:
    conn: sqlite3.Connection | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(_SCHEMA)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(submissions)")}
        for column, migration in _MIGRATIONS.items():
            if column not in columns:
                conn.execute(migration)
        conn.commit()
    except (OSError, sqlite3.Error) as exc:
        if conn is not None:
            conn.close()
        raise SubmissionBookFailed(
            f"cannot open the service's record of accepted runs at {path}: {exc}; "
            "check that CORRAL_HOME is a folder the server may write"
        ) from exc
    return conn
