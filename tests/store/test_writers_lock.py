"""The lock corral's journal writers take around each write transaction: it orders the writers
of every process, never waits past its deadline, and never follows or trusts a planted file."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from corral.agents._store import open_journal
from corral.agents._store._writers_lock import SUFFIX, WritersLock
from tests._journal import seed_agent

pytestmark = pytest.mark.anyio


@contextmanager
def held_elsewhere(journal: Path) -> Iterator[int]:
    """Another process's writer holding the lock (another open file: flock locks are per open)."""
    fd = os.open(f"{journal}{SUFFIX}", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError, not a hang, if it is held
    try:
        yield fd
    finally:
        os.close(fd)


def test_a_free_lock_is_taken_at_once_and_given_back(tmp_path: Path) -> None:
    lock = WritersLock(tmp_path / "journal.sqlite")
    assert lock.acquire(0.0)
    lock.release()
    with held_elsewhere(tmp_path / "journal.sqlite") as other:
        assert other >= 0  # taken by another open file right after: the release let it go
    lock.close()


def test_a_lock_held_elsewhere_is_given_up_at_the_deadline(tmp_path: Path) -> None:
    lock = WritersLock(tmp_path / "journal.sqlite")
    with held_elsewhere(tmp_path / "journal.sqlite"):
        assert not lock.acquire(0.05)
    # The abandoned wait takes the lock when it comes free and lets it go at once, so the next
    # acquire gets it (within its deadline, not for ever).
    assert lock.acquire(10.0)
    lock.release()
    lock.close()


def test_a_waiter_gets_the_lock_when_the_holder_lets_it_go(tmp_path: Path) -> None:
    lock = WritersLock(tmp_path / "journal.sqlite")
    holder = os.open(f"{tmp_path / 'journal.sqlite'}{SUFFIX}", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert not lock.acquire(0.01)  # starts the waiting thread; the holder still has it
    os.close(holder)  # a holder that dies lets go, as a process that exits does
    assert lock.acquire(10.0)
    lock.release()
    lock.close()


async def test_a_journal_write_goes_on_while_another_writer_holds_the_lock_past_its_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corral.agents._store import _writer

    monkeypatch.setattr(_writer, "LOCK_DEADLINE", 0.05)
    journal = tmp_path / "journal.sqlite"
    async with open_journal(journal) as store:
        with held_elsewhere(journal), anyio.fail_after(10):
            await seed_agent(store, "a", "r")  # waits 0.05 s for the lock, then SQLite's own
        assert [e.kind for e in await store.events("a")] == []
        assert [r.run_id for r in await store.list_runs()] == ["r"]
