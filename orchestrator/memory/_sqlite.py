"""`SqliteMemories`: the memory store in the journal's own SQLite file, in tables of its own.

The tables (`memories`, `memory_insights`, `memory_consolidations`) are created on open if they
are missing, so memories live where the journal lives and move with it. The journal's schema
and migrations are `agents._store`'s; nothing here touches its tables. Each call runs in a
worker thread on one connection, one at a time (a lock), in one transaction.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from array import array
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from corral.agents import open_sqlite_store
from corral.agents._store import TextSafeConnection
from corral.tools import OperationFailed

from ._records import Insight, MemoryRecord
from ._store import InMemoryMemories

T = TypeVar("T")
BUSY_TIMEOUT_MS = 10_000
SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    memory_id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    text TEXT NOT NULL,
    files TEXT NOT NULL,
    run_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    created_at REAL NOT NULL,
    embedding BLOB NOT NULL,
    prompt_version TEXT
);
CREATE INDEX IF NOT EXISTS memories_by_project ON memories (project, created_at);
CREATE TABLE IF NOT EXISTS memory_insights (
    insight_id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    text TEXT NOT NULL,
    source_ids TEXT NOT NULL,
    created_at REAL NOT NULL,
    position INTEGER NOT NULL,
    prompt_version TEXT
);
CREATE INDEX IF NOT EXISTS memory_insights_by_project ON memory_insights (project, position);
CREATE TABLE IF NOT EXISTS memory_consolidations (
    project TEXT PRIMARY KEY,
    consolidated_at REAL NOT NULL
);
"""
MEMORY_COLUMNS = "memory_id, project, text, files, run_id, agent_id, created_at, embedding"
INSIGHT_COLUMNS = "insight_id, project, text, source_ids, created_at"
"""The columns both stores have; SQLite's tables also keep each row's `prompt_version`."""
VERSIONED = ("memories", "memory_insights")


class MemoryStoreUnavailable(OperationFailed):
    """The memory tables of the journal could not be opened or written."""


@asynccontextmanager
async def open_sqlite_memories(
    path: Path, *, read_only: bool = False
) -> AsyncIterator[SqliteMemories | InMemoryMemories]:
    """The memory store in the journal at `path` (created if missing), closed on exit.

    `read_only` never writes to the file (`corral journal copy` reads its source so); a journal
    without memory tables then reads as an empty store."""
    if read_only:
        conn = await anyio.to_thread.run_sync(_connect_read_only, path)
        if conn is None:
            yield InMemoryMemories()
            return
    else:
        if not await anyio.Path(path).exists():
            # The journal makes the file: one that held only memory tables would not pass for
            # a journal when a run opened it later.
            async with open_sqlite_store(path):
                pass
        conn = await anyio.to_thread.run_sync(_connect, path)
    store = SqliteMemories(conn, path, read_only=read_only)
    try:
        yield store
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(conn.close)


def _connect(path: Path) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, factory=TextSafeConnection
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(SCHEMA)
        _add_versions(conn)
    except (OSError, sqlite3.Error) as exc:
        raise MemoryStoreUnavailable(f"cannot open the memory store in {path}: {exc}") from exc
    return conn


def _connect_read_only(path: Path) -> sqlite3.Connection | None:
    """A connection that cannot write, or None when the journal holds no memory tables."""
    try:
        uri = f"{path.resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(
            uri,
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            factory=TextSafeConnection,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        found = conn.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
            "('memories', 'memory_insights', 'memory_consolidations')"
        ).fetchone()[0]
    except (OSError, sqlite3.Error) as exc:
        raise MemoryStoreUnavailable(f"cannot read the memory store in {path}: {exc}") from exc
    if found < 3:
        conn.close()
        return None
    return conn


def _add_versions(conn: sqlite3.Connection) -> None:
    """Give tables made before prompt versions were kept their `prompt_version` column."""
    for table in VERSIONED:
        if _has_version(conn, table):
            continue
        try:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN prompt_version TEXT")
        except sqlite3.OperationalError:
            if not _has_version(conn, table):  # not just another process adding it first
                raise


def _has_version(conn: sqlite3.Connection, table: str) -> bool:
    return any(row[1] == "prompt_version" for row in conn.execute(f"PRAGMA table_info({table})"))


class SqliteMemories:
    """A `MemoryStore` in SQLite; open it with `open_sqlite_memories`."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *, read_only: bool = False) -> None:
        self._conn = conn
        self._path = path
        self._begin = "BEGIN" if read_only else "BEGIN IMMEDIATE"
        self._lock = threading.Lock()
        # A journal read only may predate the column (it is added on a writable open).
        versions = {table: _has_version(conn, table) for table in VERSIONED}
        self._memory_columns = f"{MEMORY_COLUMNS}, " + (
            "prompt_version" if versions["memories"] else "NULL"
        )
        self._insight_columns = f"{INSIGHT_COLUMNS}, " + (
            "prompt_version" if versions["memory_insights"] else "NULL"
        )

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._transaction, work)

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                self._conn.execute(self._begin)
                try:
                    result = work(self._conn)
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
                return result
            except sqlite3.Error as exc:
                raise MemoryStoreUnavailable(f"memory store {self._path}: {exc}") from exc

    async def add(self, records: Sequence[MemoryRecord], *, cap: int) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.executemany(
                f"INSERT OR REPLACE INTO memories ({MEMORY_COLUMNS}, prompt_version)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                [(*memory_row(r), r.prompt_version) for r in records],
            )
            for project in {r.project for r in records}:
                conn.execute(
                    "DELETE FROM memories WHERE memory_id IN (SELECT memory_id FROM memories"
                    " WHERE project = ? ORDER BY created_at DESC, memory_id LIMIT -1 OFFSET ?)",
                    (project, cap),
                )

        await self._run(work)

    async def memories(self, project: str | None) -> list[MemoryRecord]:
        where, args = _scope(project)
        columns = self._memory_columns
        sql = f"SELECT {columns} FROM memories{where} ORDER BY created_at DESC, memory_id"
        rows = await self._run(lambda conn: conn.execute(sql, args).fetchall())
        return [memory_from_row(row) for row in rows]

    async def insights(self, project: str | None) -> list[Insight]:
        where, args = _scope(project)
        columns = self._insight_columns
        sql = f"SELECT {columns} FROM memory_insights{where} ORDER BY project, position"
        rows = await self._run(lambda conn: conn.execute(sql, args).fetchall())
        return [insight_from_row(row) for row in rows]

    async def get(self, item_id: str) -> MemoryRecord | Insight | None:
        def work(conn: sqlite3.Connection) -> MemoryRecord | Insight | None:
            sql = f"SELECT {self._memory_columns} FROM memories WHERE memory_id = ?"
            row = conn.execute(sql, (item_id,)).fetchone()
            if row is not None:
                return memory_from_row(row)
            sql = f"SELECT {self._insight_columns} FROM memory_insights WHERE insight_id = ?"
            row = conn.execute(sql, (item_id,)).fetchone()
            return insight_from_row(row) if row is not None else None

        return await self._run(work)

    async def forget(self, item_id: str) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            gone = conn.execute("DELETE FROM memory_insights WHERE insight_id = ?", (item_id,))
            if gone.rowcount:
                return True
            if not conn.execute("DELETE FROM memories WHERE memory_id = ?", (item_id,)).rowcount:
                return False
            rows = conn.execute("SELECT insight_id, source_ids FROM memory_insights").fetchall()
            citing = [(i,) for i, sources in rows if item_id in json.loads(sources)]
            conn.executemany("DELETE FROM memory_insights WHERE insight_id = ?", citing)
            return True

        return await self._run(work)

    async def forget_run(self, run_id: str) -> int:
        def work(conn: sqlite3.Connection) -> int:
            sql = "DELETE FROM memories WHERE run_id = ? RETURNING memory_id, project"
            gone = conn.execute(sql, (run_id,)).fetchall()
            for project in {p for _, p in gone}:
                sql = "SELECT insight_id, source_ids FROM memory_insights WHERE project = ?"
                rows = conn.execute(sql, (project,)).fetchall()
                citing = [(i,) for i in citing_insights(rows, {m for m, _ in gone})]
                conn.executemany("DELETE FROM memory_insights WHERE insight_id = ?", citing)
            return len(gone)

        return await self._run(work)

    async def clear(self, project: str | None) -> int:
        where, args = _scope(project)

        def work(conn: sqlite3.Connection) -> int:
            conn.execute(f"DELETE FROM memory_insights{where}", args)
            conn.execute(f"DELETE FROM memory_consolidations{where}", args)
            return conn.execute(f"DELETE FROM memories{where}", args).rowcount

        return await self._run(work)

    async def replace_insights(self, project: str, insights: Sequence[Insight], at: float) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM memory_insights WHERE project = ?", (project,))
            conn.executemany(
                f"INSERT INTO memory_insights ({INSIGHT_COLUMNS}, position, prompt_version)"
                " VALUES (?,?,?,?,?,?,?)",
                [(*insight_row(i), n, i.prompt_version) for n, i in enumerate(insights)],
            )
            conn.execute(
                "INSERT OR REPLACE INTO memory_consolidations VALUES (?, ?)", (project, at)
            )

        await self._run(work)

    async def since_consolidation(self, project: str) -> int:
        def work(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT consolidated_at FROM memory_consolidations WHERE project = ?", (project,)
            ).fetchone()
            after = row[0] if row is not None else float("-inf")
            sql = "SELECT COUNT(*) FROM memories WHERE project = ? AND created_at > ?"
            return int(conn.execute(sql, (project, after)).fetchone()[0])

        return await self._run(work)

    async def count(self, project: str) -> int:
        sql = (
            "SELECT (SELECT COUNT(*) FROM memories WHERE project = ?)"
            " + (SELECT COUNT(*) FROM memory_insights WHERE project = ?)"
        )
        row = await self._run(lambda conn: conn.execute(sql, (project, project)).fetchone())
        return int(row[0])


def _scope(project: str | None) -> tuple[str, tuple[Any, ...]]:
    return ("", ()) if project is None else (" WHERE project = ?", (project,))


def memory_row(record: MemoryRecord) -> tuple[Any, ...]:
    vector = array("f", record.embedding).tobytes()
    files = json.dumps(list(record.files))
    return (*_head(record), files, record.run_id, record.agent_id, record.created_at, vector)


def _head(record: MemoryRecord) -> tuple[str, str, str]:
    return record.memory_id, record.project, record.text


def memory_from_row(row: Sequence[Any]) -> MemoryRecord:
    """A memory from its `MEMORY_COLUMNS`, and its prompt version where the row has one."""
    memory_id, project, text, files, run_id, agent_id, created_at, blob = row[:8]
    vector = array("f")
    vector.frombytes(blob)
    return MemoryRecord(
        memory_id=memory_id,
        project=project,
        text=text,
        files=tuple(json.loads(files)),
        run_id=run_id,
        agent_id=agent_id,
        created_at=created_at,
        embedding=tuple(vector),
        prompt_version=row[8] if len(row) > 8 else None,
    )


def citing_insights(rows: Sequence[Sequence[Any]], gone: set[str]) -> list[str]:
    """The ids of the `(insight_id, source_ids)` rows that cite a memory of `gone`."""
    return [i for i, sources in rows if gone.intersection(json.loads(sources))]


def insight_row(insight: Insight) -> tuple[Any, ...]:
    sources = json.dumps(list(insight.source_ids))
    return insight.insight_id, insight.project, insight.text, sources, insight.created_at


def insight_from_row(row: Sequence[Any]) -> Insight:
    """An insight from its `INSIGHT_COLUMNS`, and its prompt version where the row has one."""
    insight_id, project, text, sources, created_at = row[:5]
    return Insight(
        insight_id=insight_id,
        project=project,
        text=text,
        source_ids=tuple(json.loads(sources)),
        created_at=created_at,
        prompt_version=row[5] if len(row) > 5 else None,
    )
