"""A short GIL switch interval for the processes of a fan-out, so the journal's writer thread
gets the GIL back quickly while it holds the journal's write lock.

SQLite lets one connection of all the run's processes write at a time. A process's journal
writer thread holds that lock from `BEGIN IMMEDIATE` to `COMMIT`, and between its statements
(Python's `sqlite3` lets go of the GIL around each) it needs the GIL, which a busy event loop
(every process of a fan-out at scale) hands over only after the switch interval, 5 ms by
default. Timed in both processes of a fan-out at 1,000 agents (docs/performance.md, round 7):
the lock was held four to eleven times as long as the writer's own CPU in its transactions, and
each process waited seconds per run for the other's; with 0.5 ms the one-process fan-out held
it about a third less, two processes mostly less (the machine's load blurs the rest). The loop
pays a switch only when another thread waits for the GIL, which in a fan-out is mostly that
writer. Kept provisionally: whether it pays is for a quiet machine to show (the page says how).
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
