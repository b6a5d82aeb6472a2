"""Files planted where the journal writers' lock file goes are never followed or used: the
journal then works with SQLite's lock alone."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import anyio
import pytest

from corral.agents._store._writers_lock import SUFFIX, WritersLock
from tests.store.test_writer_threads import (
    open_writer,
    recording,
    sqlite_lock_held_elsewhere,
    submit,
)

pytestmark = pytest.mark.hostile


def test_a_link_planted_as_the_lock_file_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "secret"
    target.parent.mkdir()
    os.symlink(target, f"{tmp_path / 'journal.sqlite'}{SUFFIX}")
    lock = WritersLock(tmp_path / "journal.sqlite")
    assert not lock.acquire(0.0)  # no lock file: nothing is locked, the journal still works
    assert not target.exists()
    lock.close()


def test_a_fifo_planted_as_the_lock_file_is_not_used(tmp_path: Path) -> None:
    os.mkfifo(f"{tmp_path / 'journal.sqlite'}{SUFFIX}")
    lock = WritersLock(tmp_path / "journal.sqlite")
    assert not lock.acquire(0.0)
    lock.close()


@pytest.mark.anyio
async def test_with_a_planted_lock_file_a_write_that_finds_sqlite_locked_never_blocks_the_loop(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite"
    os.mkfifo(f"{journal}{SUFFIX}")  # no writers' lock: SQLite's lock alone orders the writers
    done: list[tuple[str, int]] = []
    async with open_writer(journal) as writer:
        with sqlite_lock_held_elsewhere(journal) as fired:
            job = submit(writer, recording(done, "r1"))
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
            assert not fired.is_set() and not job.done.done(), "the loop went on meanwhile"
        with anyio.fail_after(10):
            await job.done
    assert not fired.is_set()
    assert [name for name, _ in done] == ["r1"]
    assert done[0][1] != threading.get_ident(), "it waited in the writer's thread"
