"""Admission of a supervisor's workers: at most `agents.max_threads` run, the rest wait in order.

A spawn past the thread limit is not refused: the worker is journaled and waits in its parent's
queue (its place among the parent's children is its place in line) until a running sibling
finishes or is closed. Only past `agents.max_queued_spawns` waiting is a spawn refused. This
module counts and chooses, over any `Slot`s; what starts the chosen workers is the executor's:
`RunRuntime` here, the agent's workflow on Temporal (`temporal._collab`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from corral.agents import AgentsConfig

from ._handle import AgentHandle


class Slot(Protocol):
    """A worker as its parent's thread limit sees it."""

    @property
    def holds_slot(self) -> bool:
        """Started, and not done: it counts against the limit."""
        ...

    @property
    def waiting_to_start(self) -> bool:
        """Queued, and not closed or ended meanwhile: it counts against the queue."""
        ...


SlotT = TypeVar("SlotT", bound=Slot)


@dataclass(frozen=True)
class Capacity:
    """A parent's workers as the thread limit sees them: running, waiting to start, the limit."""

    running: int
    queued: int
    limit: int

    @property
    def has_room(self) -> bool:
        return self.running < self.limit

    def as_json(self) -> dict[str, Any]:
        return {"running": self.running, "queued": self.queued, "limit": self.limit}


def capacity_of(parent: AgentHandle, limits: AgentsConfig) -> Capacity:
    return capacity_among(parent.children, limits)


def capacity_among(workers: Iterable[Slot], limits: AgentsConfig) -> Capacity:
    """How many of one parent's `workers` run and wait, and the thread limit."""
    listed = list(workers)
    running = sum(1 for worker in listed if worker.holds_slot)
    queued = sum(1 for worker in listed if worker.waiting_to_start)
    return Capacity(running=running, queued=queued, limit=limits.max_threads)


def queue_refusal(capacity: Capacity, limits: AgentsConfig) -> str | None:
    """Why one more spawn may neither start nor wait, or None when it may do one of them."""
    if capacity.has_room or capacity.queued < limits.max_queued_spawns:
        return None
    return (
        f"thread limit reached (agents.max_threads = {limits.max_threads}) and the spawn queue "
        f"is full (agents.max_queued_spawns = {limits.max_queued_spawns}): {capacity.running} "
        f"of your workers are running and {capacity.queued} wait to start; wait for one with "
        "wait_agent or close one with close_agent before spawning another"
    )


def spawn_refusal(
    depth: int, capacity: Capacity, limits: AgentsConfig, exhausted: str | None
) -> str | None:
    """Why a parent at `depth` with `capacity` may not spawn one more worker now (too deep, the
    queue full, the run's budget `exhausted`), or None; the model is told the reason."""
    if depth + 1 > limits.max_depth:
        return f"depth limit reached (agents.max_depth = {limits.max_depth}): do this task yourself"
    full = queue_refusal(capacity, limits)
    if full is not None:
        return full
    if exhausted is not None:
        return f"no more workers can start: {exhausted}"
    return None


def no_more_input(nickname: str, exhausted: str) -> str:
    """Why a worker is sent nothing once the run's budget is spent: it could take no turn."""
    return f"agent {nickname} can take no more input: {exhausted}"


def never_started(exhausted: str) -> str:
    """Why a queued worker ends without starting: the run's budget ran out while it waited."""
    return f"never started: {exhausted}"


def ready_to_start(parent: AgentHandle, limits: AgentsConfig) -> list[AgentHandle]:
    """The waiting workers of `parent` that free slots let start now, first come first."""
    return ready_among(parent.children, limits)


def ready_among(workers: Sequence[SlotT], limits: AgentsConfig) -> list[SlotT]:
    """The waiting ones of one parent's `workers` (in spawn order) that free slots let start
    now, first come first."""
    room = limits.max_threads - capacity_among(workers, limits).running
    waiting = [worker for worker in workers if worker.waiting_to_start]
    return waiting[: max(0, room)]
