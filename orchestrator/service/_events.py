"""A run's journal events, read once per run by a tailer, for every stream of that run to share.

Event ids are the journal's own per-run sequence (`run_seq`: 1, 2, ... across all the run's
agents, in the order they were journaled), so they are the same for every client, survive a
restart of the server, and continue where they stopped when a run is resumed. One tailer per run
reads the journal; every event stream is a cursor over the `EventLog` it fills, so a slow client
holds no one up and a thousand clients cost one reader. A run this server does not execute (one
another process runs on the same journal) has no tailer: its streams read the shared log with
`read_to_end` instead, which ends it once the journal calls the run over. Either reads when the
run's `Wakeups` say the journal grew (whichever process appended), and at the latest every
`RESYNC_INTERVAL`, always from the last `run_seq` it has: a lost wake-up loses no event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from corral.agents import Store

from ._wakeups import Wakeups

READ_BATCH = 1000
"""Events read from the journal in one query."""
RESYNC_INTERVAL = 1.0
"""How often a follower re-reads the journal when no wake-up came (one may have been lost)."""
OPEN_STATUSES = frozenset({"queued", "running"})
"""Journal statuses after which more events may come."""


@dataclass(frozen=True)
class RunEvent:
    """One journal event with its per-run `id`."""

    id: int
    agent_id: str
    seq: int
    kind: str
    payload: dict[str, Any]
    at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.id,
            "agent_id": self.agent_id,
            "agent_seq": self.seq,
            "kind": self.kind,
            "payload": self.payload,
            "at": self.at,
        }


@dataclass
class EventLog:
    """The events read so far, append-only; readers wait on it without ever blocking the run."""

    events: list[RunEvent] = field(default_factory=list)
    ending: dict[str, Any] | None = None
    """Set once no event can follow: `{"status": ...}` and, for a failure, `"error"`."""
    _changed: anyio.Event = field(default_factory=anyio.Event)
    _reading: anyio.Lock = field(default_factory=anyio.Lock)
    """Held while reading, so two readers of one log never append the same events twice."""

    @property
    def ended(self) -> bool:
        return self.ending is not None

    def finish(self, ending: dict[str, Any]) -> None:
        if self.ending is None:
            self.ending = ending
            self._wake()

    async def wait_beyond(
        self, count: int, within: float, woken: anyio.Event | None = None
    ) -> bool:
        """Wait until the log has more than `count` events or has ended, or `woken` is set;
        False after `within` s."""
        changed = self._changed
        if len(self.events) > count or self.ended or (woken is not None and woken.is_set()):
            return True
        with anyio.move_on_after(within):
            await (changed.wait() if woken is None else _either(changed, woken))
            return True
        return False

    async def read_round(self, store: Store, run_id: str) -> None:
        """Append whatever the journal holds for the run beyond what was read before."""
        async with self._reading:
            await self._read_round(store, run_id)

    async def read_to_end(self, store: Store, run_id: str) -> None:
        """Read what is new of a run another process executes, and end the log if it is over."""
        if self.ended:
            return
        record = await store.get_run(run_id)
        # Read after the status: events journaled before the run was called over are all in.
        await self.read_round(store, run_id)
        if record is not None and record.status not in OPEN_STATUSES:
            self.finish({"status": record.status})

    async def _read_round(self, store: Store, run_id: str) -> None:
        if await store.get_run(run_id) is None:  # not journaled yet: nothing to read
            return
        added = False
        while batch := await store.run_events(run_id, after=len(self.events), limit=READ_BATCH):
            for event in batch:
                self.events.append(
                    RunEvent(
                        event.run_seq,
                        event.agent_id,
                        event.seq,
                        event.kind,
                        event.payload,
                        event.at,
                    )
                )
            added = True
        if added:
            self._wake()

    async def follow(
        self, store: Store, run_id: str, done: Callable[[], bool], wakeups: Wakeups
    ) -> None:
        """Tail the journal until `done()` says the run is over, then read one last round."""
        while not done():
            woken = wakeups.waiter(run_id)  # before reading: a wake-up during it is kept
            await self.read_round(store, run_id)
            with anyio.move_on_after(RESYNC_INTERVAL):
                await woken.wait()
        await self.read_round(store, run_id)

    def _wake(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()


async def _either(first: anyio.Event, second: anyio.Event) -> None:
    """Return once either event is set."""
    async with anyio.create_task_group() as tg:

        async def stop_on(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(stop_on, first)
        tg.start_soon(stop_on, second)
