"""`PrioritySlots`: a counting semaphore that serves urgent waiters before background ones.

A freed slot is handed straight to the next waiter (urgent queue first, then background, each
in arrival order), so nobody can overtake the queue between the release and the wake-up. A
background waiter can be made urgent while it waits. It knows nothing of compaction.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import anyio


@dataclass(eq=False)
class _Waiter:
    owner: str
    urgent: bool
    handed: anyio.Event = field(default_factory=anyio.Event)


class PrioritySlots:
    """`capacity` slots; `acquire` waits in its queue, `release` hands the slot on."""

    def __init__(self, capacity: int) -> None:
        self._free = capacity
        self._queues: dict[bool, deque[_Waiter]] = {True: deque(), False: deque()}

    @property
    def waiting(self) -> int:
        return len(self._queues[True]) + len(self._queues[False])

    async def acquire(self, owner: str, *, urgent: bool) -> None:
        if self._free > 0 and not self._queues[True] and (urgent or not self._queues[False]):
            await anyio.lowlevel.checkpoint_if_cancelled()
            self._free -= 1
            await anyio.lowlevel.cancel_shielded_checkpoint()
            return
        waiter = _Waiter(owner, urgent)
        self._queues[urgent].append(waiter)
        try:
            await waiter.handed.wait()
        except BaseException:
            if waiter.handed.is_set():
                self.release()  # handed a slot but cancelled before using it: pass it on
            else:
                self._queues[waiter.urgent].remove(waiter)
            raise

    def release(self) -> None:
        for urgent in (True, False):
            if self._queues[urgent]:
                self._queues[urgent].popleft().handed.set()
                return
        self._free += 1

    def hurry(self, owner: str) -> bool:
        """Move `owner`'s background waiters to the urgent queue; whether any was waiting."""
        moved = [w for w in self._queues[False] if w.owner == owner]
        for waiter in moved:
            self._queues[False].remove(waiter)
            waiter.urgent = True
            self._queues[True].append(waiter)
        return bool(moved)
