"""The limiter's sense of time: `Clock`, the real `SystemClock` and the hand-driven `ManualClock`.

Every wait in the limiter goes through a `Clock`, so unit tests move time by hand with
`ManualClock.advance` instead of sleeping, and only the integration test runs in real time.
"""

from __future__ import annotations

import time
from typing import Protocol

import anyio
import anyio.lowlevel

# Float sums (0.1 + 0.2) must not leave a sleeper one ulp short of its wake-up time.
_EPSILON = 1e-9


class Clock(Protocol):
    """Monotonic seconds and a sleep measured on the same scale."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """Real time: `time.monotonic` (the asyncio loop's own clock) and `anyio.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


class ManualClock:
    """Time that moves only when a test calls `advance`; sleepers wake once their time comes."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, anyio.Event]] = []

    @property
    def sleepers(self) -> int:
        """How many tasks are asleep on this clock."""
        return len(self._sleepers)

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        entry = (self._now + seconds, anyio.Event())
        self._sleepers.append(entry)
        try:
            await entry[1].wait()
        finally:
            if entry in self._sleepers:
                self._sleepers.remove(entry)

    def advance(self, seconds: float) -> None:
        """Move time forward and wake every sleeper whose time has come."""
        self._now += seconds
        due = [entry for entry in self._sleepers if entry[0] <= self._now + _EPSILON]
        for entry in due:
            self._sleepers.remove(entry)
            entry[1].set()


SYSTEM_CLOCK = SystemClock()
