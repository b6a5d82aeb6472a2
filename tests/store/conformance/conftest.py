"""The `Store` conformance suite's one fixture: every test here runs on each implementation.

`store` is the in-memory twin, an SQLite file and a PostgreSQL database (a fresh one per test on
the session's throwaway server, see tests/_postgres.py), so the three are held to one behaviour.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from corral.agents._store import MemoryStore, Store, Target, open_journal

STORES = ["memory", "sqlite", "postgres"]


@pytest.fixture(params=STORES)
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Target | None:
    """Where the store under test lives (None for the in-memory twin), for tests that reopen it."""
    if request.param == "memory":
        return None
    if request.param == "sqlite":
        return tmp_path / "journal.sqlite"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def store(journal: Target | None) -> AsyncIterator[Store]:
    if journal is None:
        memory = MemoryStore()
        yield memory
        await memory.aclose()
        return
    async with open_journal(journal) as opened:
        yield opened
