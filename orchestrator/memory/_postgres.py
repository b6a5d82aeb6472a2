"""`PostgresMemories`: the memory store in the shared PostgreSQL journal, beside its tables.

The tables are the journal's migrations 4 and 5 (`agents._store._pg_schema`); opening the store
migrates the database as opening the journal does, and nothing here creates tables. Rows are
SQLite's (`_sqlite`'s row helpers), embeddings float32 bytea; every string goes through the
journal's `to_pg`/`from_pg`, so a NUL in a model's answer never fails a write. Each call is one
transaction on the journal's pooled, retrying connections, a write never applied twice.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from corral.agents._store import PgRunner, StoreError, from_pg, open_pg_runner, to_pg

from ._records import Insight, MemoryRecord
from ._sqlite import (
    INSIGHT_COLUMNS,
    MEMORY_COLUMNS,
    MemoryStoreUnavailable,
    citing_insights,
    insight_from_row,
    insight_row,
    memory_from_row,
    memory_row,
)

T = TypeVar("T")
_MEMORY = f"{MEMORY_COLUMNS}, prompt_version"
_INSIGHT = f"{INSIGHT_COLUMNS}, prompt_version"
Conn = Any


@asynccontextmanager
async def open_postgres_memories(
    url: str, *, read_only: bool = False
) -> AsyncIterator[PostgresMemories]:
    """The memory store in the journal at `url` (migrated first, unless `read_only`: then the
    journal must be at this code's version), closed on exit."""
    try:
        async with open_pg_runner(url, read_only=read_only) as runner:
            yield PostgresMemories(runner)
    except StoreError as exc:
        raise MemoryStoreUnavailable(f"cannot open the memory store: {exc}") from exc


def _args(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(to_pg(v) for v in values)


def _row(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(from_pg(v) for v in values)


class PostgresMemories:
    """A `MemoryStore` in PostgreSQL; open it with `open_postgres_memories`."""

    def __init__(self, runner: PgRunner) -> None:
        self._runner = runner

    async def _write(self, work: Callable[[Conn], T]) -> T:
        return await self._runner.run(work, writes=True)

    async def _read(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        rows = await self._runner.run(
            lambda conn: conn.execute(sql, _args(args)).fetchall(), writes=False
        )
        return [_row(r) for r in rows]

    async def add(self, records: Sequence[MemoryRecord], *, cap: int) -> None:
        def work(conn: Conn) -> None:
            upsert = (
                f"INSERT INTO memories ({_MEMORY}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s) "
                "ON CONFLICT (memory_id) DO UPDATE SET "
                + ", ".join(f"{c} = EXCLUDED.{c}" for c in _MEMORY.split(", ")[1:])
            )
            for record in records:
                conn.execute(upsert, _args((*memory_row(record), record.prompt_version)))
            for project in {r.project for r in records}:
                conn.execute(
                    "DELETE FROM memories WHERE memory_id IN (SELECT memory_id FROM memories"
                    " WHERE project = %s ORDER BY created_at DESC, memory_id OFFSET %s)",
                    _args((project, cap)),
                )

        await self._write(work)

    async def memories(self, project: str | None) -> list[MemoryRecord]:
        where, args = _scope(project)
        sql = f"SELECT {_MEMORY} FROM memories{where} ORDER BY created_at DESC, memory_id"
        return [memory_from_row(r) for r in await self._read(sql, args)]

    async def insights(self, project: str | None) -> list[Insight]:
        where, args = _scope(project)
        sql = f"SELECT {_INSIGHT} FROM memory_insights{where} ORDER BY project, position"
        return [insight_from_row(r) for r in await self._read(sql, args)]

    async def get(self, item_id: str) -> MemoryRecord | Insight | None:
        sql = f"SELECT {_MEMORY} FROM memories WHERE memory_id = %s"
        found = await self._read(sql, (item_id,))
        if found:
            return memory_from_row(found[0])
        sql = f"SELECT {_INSIGHT} FROM memory_insights WHERE insight_id = %s"
        found = await self._read(sql, (item_id,))
        return insight_from_row(found[0]) if found else None

    async def forget(self, item_id: str) -> bool:
        def work(conn: Conn) -> bool:
            key = _args((item_id,))
            if conn.execute("DELETE FROM memory_insights WHERE insight_id = %s", key).rowcount:
                return True
            if not conn.execute("DELETE FROM memories WHERE memory_id = %s", key).rowcount:
                return False
            rows = conn.execute("SELECT insight_id, source_ids FROM memory_insights").fetchall()
            for insight_id, sources in rows:
                if item_id in json.loads(from_pg(sources)):
                    conn.execute("DELETE FROM memory_insights WHERE insight_id = %s", (insight_id,))
            return True

        return await self._write(work)

    async def forget_run(self, run_id: str) -> int:
        def work(conn: Conn) -> int:
            sql = "DELETE FROM memories WHERE run_id = %s RETURNING memory_id, project"
            gone = [_row(r) for r in conn.execute(sql, _args((run_id,))).fetchall()]
            for project in {p for _, p in gone}:
                sql = "SELECT insight_id, source_ids FROM memory_insights WHERE project = %s"
                rows = [_row(r) for r in conn.execute(sql, _args((project,))).fetchall()]
                for insight_id in citing_insights(rows, {m for m, _ in gone}):
                    sql = "DELETE FROM memory_insights WHERE insight_id = %s"
                    conn.execute(sql, _args((insight_id,)))
            return len(gone)

        return await self._write(work)

    async def clear(self, project: str | None) -> int:
        where, args = _scope(project)

        def work(conn: Conn) -> int:
            conn.execute(f"DELETE FROM memory_insights{where}", _args(args))
            conn.execute(f"DELETE FROM memory_consolidations{where}", _args(args))
            return int(conn.execute(f"DELETE FROM memories{where}", _args(args)).rowcount)

        return await self._write(work)

    async def replace_insights(self, project: str, insights: Sequence[Insight], at: float) -> None:
        def work(conn: Conn) -> None:
            conn.execute("DELETE FROM memory_insights WHERE project = %s", _args((project,)))
            sql = (
                f"INSERT INTO memory_insights ({_INSIGHT}, position) VALUES (%s,%s,%s,%s,%s,%s,%s)"
            )
            for n, insight in enumerate(insights):
                conn.execute(sql, _args((*insight_row(insight), insight.prompt_version, n)))
            conn.execute(
                "INSERT INTO memory_consolidations (project, consolidated_at) VALUES (%s, %s) "
                "ON CONFLICT (project) DO UPDATE SET consolidated_at = EXCLUDED.consolidated_at",
                _args((project, at)),
            )

        await self._write(work)

    async def since_consolidation(self, project: str) -> int:
        sql = (
            "SELECT COUNT(*) FROM memories WHERE project = %s AND created_at > COALESCE("
            "(SELECT consolidated_at FROM memory_consolidations WHERE project = %s), "
            "'-Infinity'::double precision)"
        )
        rows = await self._read(sql, (project, project))
        return int(rows[0][0])

    async def count(self, project: str) -> int:
        sql = (
            "SELECT (SELECT COUNT(*) FROM memories WHERE project = %s)"
            " + (SELECT COUNT(*) FROM memory_insights WHERE project = %s)"
        )
        rows = await self._read(sql, (project, project))
        return int(rows[0][0])


def _scope(project: str | None) -> tuple[str, tuple[Any, ...]]:
    return ("", ()) if project is None else (" WHERE project = %s", (project,))
