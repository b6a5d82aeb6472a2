"""The seam between a run's writers and the followers of its events, and its in-process twin.

See `_wakeups` for the protocol's contract and the journals' own kinds."""

from __future__ import annotations

import weakref
from typing import Protocol

import anyio
from anyio.abc import TaskStatus


class Wakeups(Protocol):
    """Wakes the followers of a run when its journal may have grown."""

    def waiter(self, run_id: str) -> anyio.Event:
        """An event set the next time the run's journal may have grown. Take it before reading
        and wait on it with a timeout: a wake-up can be lost, the journal cannot."""
        ...

    def notify(self, run_id: str) -> None:
        """This process journaled something of the run: wake its followers now."""
        ...

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Watch for other processes' appends until cancelled (nothing to do in-process)."""
        ...


class LocalWakeups:
    """The in-process twin: `notify` wakes the run's waiters; nothing else does.

    Waiters are held weakly: a follower that went away (a client that hung up, a run that
    ended without a last append) leaves nothing behind to watch."""

    def __init__(self) -> None:
        self._waiting: weakref.WeakValueDictionary[str, anyio.Event] = weakref.WeakValueDictionary()

    def waiter(self, run_id: str) -> anyio.Event:
        event = self._waiting.get(run_id)
        if event is None:
            event = self._waiting[run_id] = anyio.Event()
        return event

    def notify(self, run_id: str) -> None:
        event = self._waiting.pop(run_id, None)
        if event is not None:
            event.set()

    def notify_all(self) -> None:
        """Wake every waiter (a listener that may have missed notifications reconnected)."""
        waiting = list(self._waiting.values())
        self._waiting.clear()
        for event in waiting:
            event.set()

    @property
    def watched(self) -> list[str]:
        """The runs someone waits on now."""
        return list(self._waiting.keys())

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await anyio.sleep_forever()
