"""The one way in to the journal: which store the configuration names, opened, or migrated.

A journal is named by a target: a PostgreSQL URL (`postgresql://...`), `sqlite:PATH`, or a
plain path of an SQLite file. `[journal] url` (or `CORRAL_JOURNAL_URL`) names the shared
database; without it the journal is `$CORRAL_HOME/journal.sqlite`. Every command, the service
and the Temporal activities open the journal here, so all of them use the configured store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from ._protocol import Store
from ._sqlite import open_sqlite_store
from ._targets import (
    Target,
    describe,
    is_postgres,
    journal_target,
    need_driver,
    parse_target,
)

if TYPE_CHECKING:
    from .._config import CorralConfig


def open_store(
    config: CorralConfig, *, read_only: bool = False
) -> AbstractAsyncContextManager[Store]:
    """The journal `config` names, opened (and migrated unless `read_only`)."""
    return open_journal(journal_target(config), read_only=read_only)


@asynccontextmanager
async def open_journal(target: Target, *, read_only: bool = False) -> AsyncIterator[Store]:
    """Open the journal at `target` and close it on exit; see `Target` for the spellings."""
    if isinstance(target, str) and not is_postgres(target):
        target = parse_target(target)
    if isinstance(target, Path):
        async with open_sqlite_store(target, read_only=read_only) as store:
            yield store
        return
    from ._postgres import open_postgres_store

    async with open_postgres_store(need_driver(target), read_only=read_only) as pg:
        yield pg


@dataclass(frozen=True)
class Migration:
    """What `migrate_journal` did: the journal, and its schema version before and after."""

    journal: str
    before: int
    after: int

    def describe(self) -> str:
        if self.before == self.after:
            return f"{self.journal}: already at schema version {self.after}; nothing to apply"
        steps = ", ".join(str(v) for v in range(self.before + 1, self.after + 1))
        return (
            f"{self.journal}: applied migration(s) {steps}; "
            f"schema version {self.before} -> {self.after}"
        )


async def migrate_journal(target: Target) -> Migration:
    """Bring the journal at `target` to this code's schema (creating it), and say what changed."""
    if isinstance(target, str) and not is_postgres(target):
        target = parse_target(target)
    if isinstance(target, Path):
        before, after = await anyio.to_thread.run_sync(_migrate_sqlite, target)
        return Migration(str(target), before, after)
    from ._pg_pool import PgRunner

    runner = PgRunner(need_driver(target), describe(target))
    await anyio.to_thread.run_sync(runner.open)
    try:
        before, after = await anyio.to_thread.run_sync(runner.migrate)
    finally:
        await anyio.to_thread.run_sync(runner.close)
    return Migration(runner.label, before, after)


def _migrate_sqlite(path: Path) -> tuple[int, int]:
    from ._schema import SCHEMA_VERSION, connect, stored_version

    before = stored_version(path)
    conn: sqlite3.Connection = connect(path)
    conn.close()
    return before, SCHEMA_VERSION
