"""How a fan-out in processes deals its items: one at a time to whichever process has room,
each within its share of the run's concurrency and never past the concurrency in all; this
process's own share (`LocalWorker`), and the share of a worker process that was lost.

The worker processes themselves (their channel, permits, heartbeat) are `_parent`'s; here they
are seats that take items (`WorkerSeat`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

import anyio
from anyio.abc import TaskGroup

from corral.agents import ItemRecord


class WorkerSeat(Protocol):
    """A worker process as the deal sees it."""

    share: int
    stopping: bool

    @property
    def lost(self) -> bool: ...

    def deal_more(self) -> None: ...


@dataclass(frozen=True)
class ReadBack:
    """An item of a lost worker process as the journal now has it: its record, its latest
    agent (None: none was journaled, it starts afresh), and whether it is final already."""

    record: ItemRecord
    owner: str | None
    final: bool


ReadItems = Callable[[list[int]], Awaitable[list[ReadBack]]]
"""Reads the given items back from the journal (for items a lost worker process held)."""


@dataclass
class Deal:
    """The items left to hand out, how many are not final yet, and how many are out at once:
    never more than the run's `concurrency` in all the processes together."""

    queue: deque[tuple[ItemRecord, str | None]]
    left: int
    concurrency: int
    out: int = 0
    """Items handed to a process (this one included) and not final yet."""
    all_final: anyio.Event = field(default_factory=anyio.Event)
    workers: list[WorkerSeat] = field(default_factory=list)
    local: LocalWorker | None = None

    def take(self) -> tuple[ItemRecord, str | None] | None:
        """The next item for a process with room, if the run has room for one more."""
        if not self.queue or self.out >= self.concurrency:
            return None
        self.out += 1
        return self.queue.popleft()

    def finished(self) -> None:
        """An item handed out is final: count it, and hand out what its room allows."""
        self.out -= 1
        self._count_final()
        self.deal_more()

    def _count_final(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.all_final.set()

    def lent(self) -> int:
        """The shares of the worker processes lost (killed, or ended), which this process runs
        from then on. Not those of worker processes still starting: an item lasts several
        turns, so a share borrowed during a start-up of a second or two came back only once
        those items ended, and the new process sat idle meanwhile (`benchmarks/timeline.py`,
        docs/performance.md, round 7)."""
        return sum(worker.share for worker in self.workers if worker.lost)

    def deal_more(self) -> None:
        """Hand out what the processes have room for (a finished item frees room in the run,
        not only in the process that ran it)."""
        if self.local is not None:
            self.local.deal_more()
        for worker in self.workers:
            worker.deal_more()

    def hand_back(self, items: list[ReadBack], held: int) -> None:
        """A lost process's `held` items, read back: the final ones count, the others go first
        in line to whichever process has room."""
        self.out -= held
        for item in reversed(items):
            if item.final:
                self._count_final()
            else:
                self.queue.appendleft((item.record, item.owner))
        self.deal_more()


class LocalWorker:
    """This process's own share of the items, run by the fan-out's pool as in one process."""

    def __init__(
        self, run_one: Callable[[ItemRecord], Awaitable[None]], deal: Deal, share: int
    ) -> None:
        self.run_one = run_one
        self.deal = deal
        self.share = share
        self.in_flight = 0
        self._tg: TaskGroup | None = None

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self.deal_more()
            # Until the run is done: a lost worker process's items may come back to deal.
            await self.deal.all_final.wait()

    def deal_more(self) -> None:
        while self._tg is not None and self.in_flight < self.share + self.deal.lent():
            taken = self.deal.take()
            if taken is None:
                return
            self.in_flight += 1
            self._tg.start_soon(self._item, taken[0])

    async def _item(self, record: ItemRecord) -> None:
        await self.run_one(record)
        self.in_flight -= 1
        self.deal.finished()
