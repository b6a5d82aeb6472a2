"""Attacks on `corral journal copy --from sqlite:FILE` through a journal file someone else made.

The file is opened read-only, so a trigger cannot fire; but a view named like a journal table
runs whatever query its author wrote each time corral reads that table: a recursive one never
ends and fills memory, and any view can serve rows the tables do not hold. corral never writes
a view, a trigger or a virtual table, so a file holding one is not a journal it made.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from corral.agents._store import JournalUnreadable, open_journal

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

DEADLINE = 20.0

ENDLESS = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
    "SELECT 'run-' || i, 'exec', 'done', 1.0, 1.0, '{}', NULL FROM n"
)
PLANTS = {
    "endless-view-as-runs": [
        "ALTER TABLE runs RENAME TO real_runs",
        f"CREATE VIEW runs (run_id, kind, status, created_at, updated_at, config, summary) "
        f"AS {ENDLESS}",
    ],
    "view-beside-the-tables": ["CREATE VIEW everything AS SELECT * FROM runs"],
    "trigger": [
        "CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM agents; END",
    ],
    "temp-named-view": ['CREATE VIEW IF NOT EXISTS "runs\x1b[2K" AS SELECT 1'],
}


async def make_journal(path: Path) -> None:
    async with open_journal(path):
        pass


@pytest.mark.parametrize("plant", list(PLANTS.values()), ids=list(PLANTS))
async def test_a_journal_file_with_a_view_or_trigger_is_refused_before_anything_is_read(
    tmp_path: Path, plant: list[str]
) -> None:
    path = tmp_path / "given.sqlite"
    await make_journal(path)
    with sqlite3.connect(path) as conn:
        for statement in plant:
            conn.execute(statement)
    conn.close()
    with anyio.fail_after(DEADLINE), pytest.raises(JournalUnreadable) as caught:
        async with open_journal(path, read_only=True) as store:
            await store.list_runs()
    message = str(caught.value)
    assert "not a journal corral made" in message and "\x1b" not in message


async def test_a_journal_corral_made_still_opens_read_only(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    await make_journal(path)
    async with open_journal(path, read_only=True) as store:
        assert await store.list_runs() == []
