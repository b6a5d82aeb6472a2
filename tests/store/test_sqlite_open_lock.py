"""Opening a journal that is already at this corral's schema version only reads it: it does not
queue behind another process that holds the write lock (every worker process of a fan-out opens
the run's journal while the others append to it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from corral.agents._store._schema import SCHEMA_VERSION, connect

pytestmark = pytest.mark.anyio


async def test_a_current_journal_opens_while_another_connection_holds_the_write_lock(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    connect(path).close()
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process appending, holding the lock
    try:
        with anyio.fail_after(5):  # the busy timeout is 10 s: waiting for the lock would trip this
            conn = await anyio.to_thread.run_sync(connect, path)
        (version,) = conn.execute("SELECT version FROM schema_version").fetchone()
        conn.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert version == SCHEMA_VERSION


async def test_a_new_journal_is_still_created_and_numbered_under_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "journal.sqlite"
    conn = await anyio.to_thread.run_sync(connect, path)
    (version,) = conn.execute("SELECT version FROM schema_version").fetchone()
    conn.close()
    assert version == SCHEMA_VERSION
