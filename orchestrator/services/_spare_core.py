"""Whether the machine has a core to spare at this moment, read from Linux's run queue.

A request's embedding (a few milliseconds of integer matrix products) runs a third faster on
two threads, but only while the second core is idle: where every core is busy (a fan-out's
workers), the second thread waits for a time slice between every product, and the embedding
took twice as long as on one thread. `/proc/loadavg`'s fourth field counts the threads that are
runnable machine-wide right now, the reader among them, so a count below the usable cores means
one is idle. Where the file is missing or unreadable (not Linux), no core is spare.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

LOADAVG = Path("/proc/loadavg")
# The file is one short line; whatever is past this is not it.
_MOST_BYTES = 256


def spare_core(loadavg: Path = LOADAVG, cores: int | None = None) -> bool:
    """Whether fewer threads are runnable now than this process may use cores (`cores`, by
    default its CPU affinity's size), so a second thread of its own would find one idle."""
    usable = usable_cores() if cores is None else cores
    if usable < 2:
        return False
    running = runnable_threads(loadavg)
    return running is not None and running < usable


def runnable_threads(loadavg: Path = LOADAVG) -> int | None:
    """The machine's runnable threads (the reader included), or None where `loadavg` cannot be
    read or does not hold Linux's `<1> <5> <15> <running>/<total> <last pid>`."""
    try:
        with loadavg.open("rb") as file:
            fields = file.read(_MOST_BYTES).split()
    except OSError:
        return None
    if len(fields) < 4:
        return None
    running, slash, _total = fields[3].partition(b"/")
    if not slash or not running.isdigit() or len(running) > 9:
        return None
    return int(running)


@functools.cache
def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform has one."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return len(affinity(0))
    return os.cpu_count() or 1
