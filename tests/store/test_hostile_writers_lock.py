"""Files planted where the journal writers' lock file goes are never followed or used: the
journal then works with SQLite's lock alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.agents._store._writers_lock import SUFFIX, WritersLock

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
