"""Versioned migrations on both backends: applied on open, said by `migrate_journal`, and a
journal newer than this code refused with a message that says what to do."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import psycopg
import pytest

from corral.agents._store import (
    PG_SCHEMA_VERSION,
    SCHEMA_VERSION,
    JournalUnreadable,
    migrate_journal,
    open_journal,
)

pytestmark = pytest.mark.anyio


async def test_migrating_a_new_postgresql_journal_applies_every_migration_once(
    postgres_url: str,
) -> None:
    async with anyio.create_task_group() as tg:  # two migrators at once: one of them applies
        for _ in range(2):
            tg.start_soon(migrate_journal, postgres_url)
    again = await migrate_journal(postgres_url)
    assert (again.before, again.after) == (PG_SCHEMA_VERSION, PG_SCHEMA_VERSION)
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        rows = conn.execute("SELECT version FROM schema_version").fetchall()
    assert rows == [(PG_SCHEMA_VERSION,)]


async def test_a_postgresql_journal_newer_than_this_code_is_refused(postgres_url: str) -> None:
    await migrate_journal(postgres_url)
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    for read_only in (False, True):
        with pytest.raises(JournalUnreadable, match=r"schema version 99, newer .* upgrade corral"):
            async with open_journal(postgres_url, read_only=read_only):
                pass


async def test_a_database_that_is_not_a_journal_is_not_taken_for_one(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        conn.execute("CREATE TABLE runs (id integer)")
    with pytest.raises(JournalUnreadable, match="not a corral journal"):
        async with open_journal(postgres_url):
            pass


async def test_reading_a_postgresql_database_never_creates_a_journal(postgres_url: str) -> None:
    with pytest.raises(JournalUnreadable, match="corral journal migrate"):
        async with open_journal(postgres_url, read_only=True):
            pass
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        found = conn.execute("SELECT to_regclass('runs') IS NULL").fetchone()
    assert found == (True,)


async def test_migrating_an_sqlite_journal_says_which_versions_it_applied(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    first = await migrate_journal(f"sqlite:{path}")
    assert (first.before, first.after) == (0, SCHEMA_VERSION)
    assert "applied migration(s) 1, 2, 3" in first.describe()
    again = await migrate_journal(path)
    assert "nothing to apply" in again.describe()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE schema_version SET version = 99")
    conn.close()
    with pytest.raises(JournalUnreadable, match="newer than this corral"):
        await migrate_journal(path)
