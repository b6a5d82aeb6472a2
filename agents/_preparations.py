"""The runner's side of compaction that is not one model call: the gate every summary passes
through, and the background summaries that run beside an agent's tools.

`CompactionGate` is the seam a process-wide compactor plugs into (`agents` never imports
`orchestrator`). `Preparations` owns the task group of one `drive`: a preparation runs there
until its result is fed to the core, and is cancelled when the drive ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Protocol

import anyio
from anyio.abc import TaskGroup

from ._events import Action, PrepareCompaction


class CompactionGate(Protocol):
    """Admits one summarisation per slot; shared by every agent of a process.

    `background` marks a summary prepared ahead of need; a gate may make those wait so that
    agents stalled on a full context go first. `hurry` says that `agent_id` has come to wait
    for its background summary, so it is now as urgent as a stalled one.
    """

    def slot(self, agent_id: str, *, background: bool) -> AbstractAsyncContextManager[None]: ...

    def hurry(self, agent_id: str) -> None: ...


Prepare = Callable[[PrepareCompaction], Awaitable[list[Action]]]
"""Runs one preparation to its end and answers the actions the core gave for its result."""


@dataclass
class _Running:
    done: anyio.Event = field(default_factory=anyio.Event)
    actions: list[Action] = field(default_factory=list)


class Preparations:
    """The background preparations of one drive, by `prepared_id`."""

    def __init__(self, group: TaskGroup) -> None:
        self._group = group
        self._running: dict[int, _Running] = {}

    def start(self, action: PrepareCompaction, prepare: Prepare) -> None:
        running = _Running()
        self._running[action.prepared_id] = running

        async def run() -> None:
            running.actions = await prepare(action)
            running.done.set()

        self._group.start_soon(run)

    async def wait(self, prepared_id: int) -> list[Action] | None:
        """The actions the core answered to preparation `prepared_id`'s result, once it has
        one; None if this drive never started it (the agent was resumed since)."""
        running = self._running.get(prepared_id)
        if running is None:
            return None
        await running.done.wait()
        return running.actions


@asynccontextmanager
async def open_preparations() -> AsyncIterator[Preparations]:
    """A scope for background preparations; what still runs at its end is cancelled."""
    failure: Exception | None = None
    async with anyio.create_task_group() as group:
        try:
            yield Preparations(group)
        except Exception as exc:  # re-raised as itself below, not wrapped in a group
            failure = exc
        group.cancel_scope.cancel()
    if failure is not None:
        raise failure
