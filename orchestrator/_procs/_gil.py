"""A short GIL switch interval for the processes of a fan-out, so the journal's write lock is
held for the journal's work, not for the event loop's.

SQLite lets one connection of all the run's processes write at a time. A process's journal
writer thread holds that lock from `BEGIN IMMEDIATE` to `COMMIT`, and Python's `sqlite3` lets
go of the GIL around every statement; to take it back it waits for the event-loop thread to
hand it over, which a busy loop (every process of a fan-out at scale) does only after the
switch interval, 5 ms by default. A transaction of a hundred statements then held the lock
for up to half a second of which its own work was a tenth (`benchmarks/timeline.py`, and
docs/performance.md, round 7), and every agent of the other processes waited for its next
journal write meanwhile. With a shorter interval the writer gets the GIL back within a
fraction of a millisecond; the loop pays a switch only when another thread is waiting for
the GIL, which in a fan-out is mostly that writer.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

SWITCH_INTERVAL = 0.0005
"""Seconds a thread waits for the GIL before it asks the holder to hand it over."""
_users = 0
_saved = 0.0


def use_short_switch_interval() -> None:
    """A worker process's setting, for its whole life (it runs nothing but the fan-out)."""
    sys.setswitchinterval(SWITCH_INTERVAL)


@contextmanager
def short_switch_interval() -> Iterator[None]:
    """The parent's setting while it runs a fan-out in processes; the interval it had before
    is restored when the last fan-out in processes of this process ends."""
    global _users, _saved
    if _users == 0:
        _saved = sys.getswitchinterval()
        sys.setswitchinterval(min(_saved, SWITCH_INTERVAL))
    _users += 1
    try:
        yield
    finally:
        _users -= 1
        if _users == 0:
            sys.setswitchinterval(_saved)
