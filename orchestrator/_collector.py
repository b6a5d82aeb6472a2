"""The garbage collector's pace while agents run, or a model server serves, in this process.

CPython collects its youngest generation every 700 net allocations of container objects, and
every tenth of those collections walks the middle generation too. A run keeps hundreds of
agents' conversations, requests and answers alive at once and allocates fast, so at that pace
most of what a collection walks survives it: a fan-out of 1,000 agents spent about a seventh of
its CPU in the collector (`benchmarks.collector`, docs/performance.md). While `paced_collector` is
held anywhere in the process, the first threshold is at least `RUN_THRESHOLD`, so collections
come about fourteen times less often; garbage in reference cycles waits that much longer.

The setting is the process's, so it is shared and kept as the host left it where it can be:
a higher first threshold, or a collector turned off, is left alone; when the last holder
leaves, the thresholds it found come back, unless something else changed them meanwhile.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

RUN_THRESHOLD: Final = 10_000
"""The collector's first threshold while agents run. On a fan-out of 1,000 agents, 256 at a
time, the collector took 14-16% of the CPU at 700, 5-6% at 5,000, 4% at 10,000 and 3% at
20,000 (`benchmarks.collector`); but at 20,000 `run_agents` over 1,000 agents peaked at 109 MB
against 96 at 700, and at 10,000 at 100 MB."""

_lock = threading.Lock()
_holders = 0
_found: tuple[int, ...] | None = None
"""The thresholds the first holder found, when it raised them; None when it left them."""
_set: tuple[int, ...] | None = None
"""The thresholds the first holder set, to tell whether anything changed them since."""


@contextmanager
def paced_collector() -> Iterator[None]:
    """Hold the collector's first threshold at `RUN_THRESHOLD` or above while the block runs."""
    _enter()
    try:
        yield
    finally:
        _leave()


def _enter() -> None:
    global _holders, _found, _set
    with _lock:
        _holders += 1
        if _holders > 1:
            return
        found = gc.get_threshold()
        if not gc.isenabled() or found[0] == 0 or found[0] >= RUN_THRESHOLD:
            _found = _set = None
            return
        gc.set_threshold(RUN_THRESHOLD, *found[1:])
        _found, _set = found, gc.get_threshold()


def _leave() -> None:
    global _holders, _found, _set
    with _lock:
        _holders -= 1
        if _holders > 0:
            return
        if _found is not None and gc.get_threshold() == _set:
            gc.set_threshold(*_found)
        _found = _set = None
