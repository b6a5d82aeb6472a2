"""`open_memories`: the memory store where the journal is, so memories move with it.

The journal's target (`corral.agents.journal_target`) chooses: a PostgreSQL URL opens the
memory tables in that database, anything else the SQLite file's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from corral.agents._store import Target, is_postgres, parse_target

from ._sqlite import open_sqlite_memories
from ._store import MemoryStore


@asynccontextmanager
async def open_memories(target: Target, *, read_only: bool = False) -> AsyncIterator[MemoryStore]:
    """The memory store in the journal at `target` (created or migrated), closed on exit;
    `read_only` never writes to it (nor creates or migrates anything)."""
    if isinstance(target, str) and is_postgres(target):
        from ._postgres import open_postgres_memories  # psycopg: only for a shared journal

        async with open_postgres_memories(target, read_only=read_only) as pg:
            yield pg
        return
    path = parse_target(target) if isinstance(target, str) else target
    assert isinstance(path, Path)  # a string that is no PostgreSQL URL names a file
    async with open_sqlite_memories(path, read_only=read_only) as sqlite:
        yield sqlite
