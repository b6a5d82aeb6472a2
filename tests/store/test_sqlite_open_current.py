"""Opening an SQLite journal already at this version writes nothing, so it never queues for the
write lock behind a running writer (another process of a fan-out, or a run in progress)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from corral.agents._store import SCHEMA_VERSION, JournalUnreadable
from corral.agents._store._schema import connect


def _held(path: Path) -> sqlite3.Connection:
    """Another connection holding the journal's write lock until it is closed."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    return other


def test_a_current_journal_opens_while_another_writer_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    connect(path).close()
    other = _held(path)
    try:
        conn = connect(path)  # before: waited the whole busy timeout, then failed as locked
        assert conn.execute("SELECT version FROM schema_version").fetchone() == (SCHEMA_VERSION,)
        conn.close()
    finally:
        other.close()


@pytest.mark.parametrize("stored", [SCHEMA_VERSION + 1, "x"])
def test_a_journal_at_another_version_is_still_decided_under_the_lock(
    tmp_path: Path, stored: object
) -> None:
    path = tmp_path / "journal.sqlite"
    connect(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE schema_version SET version = ?", (stored,))
    raw.close()
    with pytest.raises(JournalUnreadable, match="schema version"):
        connect(path)


def test_a_journal_behind_this_version_is_migrated_on_open(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    connect(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("DROP TABLE leases")
        raw.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION - 1,))
    raw.close()
    conn = connect(path)
    assert conn.execute("SELECT count(*) FROM leases").fetchone() == (0,)
    assert conn.execute("SELECT version FROM schema_version").fetchone() == (SCHEMA_VERSION,)
    conn.close()
