"""`Compactor`: the one limiter every agent of a process summarises through.

It implements `agents`' `CompactionGate`: a runner enters `slot(agent_id, background=...)`
around each summary call, and calls `hurry(agent_id)` when it comes to wait for a background
summary. Summaries an agent is stalled on are served before those prepared ahead of need;
background summaries use whatever capacity is left. What a summary says and when to make one
is the agent core's business, not this module's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio

from ._errors import CompactionSlotTimeout, CompactorConfigError
from ._slots import PrioritySlots

DEFAULT_MAX_CONCURRENT = 4
DEFAULT_WAIT_TIMEOUT = 600.0
"""How long a summary may wait for a slot: ten minutes of other agents' summaries."""


@dataclass(frozen=True)
class CompactorStats:
    """A snapshot: slots, summaries running and waiting now, the most ever run at once, how
    many finished, stalling (foreground) or ahead of need (background), and how many
    background summaries were hurried because their agent came to wait for them."""

    capacity: int
    active: int
    waiting: int
    high_water: int
    foreground_done: int
    background_done: int
    hurried: int


class Compactor:
    """Bounds how many agents summarise at once across the process."""

    def __init__(
        self,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
        *,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> None:
        if max_concurrent < 1:
            raise CompactorConfigError(
                f"max_concurrent is {max_concurrent}; allow at least 1 summary at a time"
            )
        if wait_timeout <= 0:
            raise CompactorConfigError(f"wait_timeout is {wait_timeout:g} s; use a positive one")
        self.capacity = max_concurrent
        self._wait_timeout = wait_timeout
        self._slots = PrioritySlots(max_concurrent)
        self._active = 0
        self._high_water = 0
        self._hurried = 0
        self._done = {False: 0, True: 0}

    @property
    def stats(self) -> CompactorStats:
        return CompactorStats(
            capacity=self.capacity,
            active=self._active,
            waiting=self._slots.waiting,
            high_water=self._high_water,
            foreground_done=self._done[False],
            background_done=self._done[True],
            hurried=self._hurried,
        )

    @asynccontextmanager
    async def slot(self, agent_id: str, *, background: bool = False) -> AsyncIterator[None]:
        """Hold one slot for one summary; raises `CompactionSlotTimeout` after the deadline."""
        try:
            with anyio.fail_after(self._wait_timeout):
                await self._slots.acquire(agent_id, urgent=not background)
        except TimeoutError as exc:
            raise CompactionSlotTimeout(
                agent_id=agent_id, capacity=self.capacity, waited=self._wait_timeout
            ) from exc
        self._active += 1
        self._high_water = max(self._high_water, self._active)
        try:
            yield
        finally:
            self._active -= 1
            self._slots.release()
        self._done[background] += 1

    def hurry(self, agent_id: str) -> None:
        """`agent_id` now waits for its background summary: serve it as a stalled one."""
        if self._slots.hurry(agent_id):
            self._hurried += 1
