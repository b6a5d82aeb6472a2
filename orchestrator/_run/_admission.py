"""Admission of a supervisor's workers: at most `agents.max_threads` run, the rest wait in order.

A spawn past the thread limit is not refused: the worker is journaled and waits in its parent's
queue (its place among the parent's children is its place in line) until a running sibling
finishes or is closed. Only past `agents.max_queued_spawns` waiting is a spawn refused. This
module counts and chooses; `RunRuntime` starts the chosen workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from corral.agents import AgentsConfig

from ._handle import AgentHandle


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
    running = sum(1 for child in parent.children if child.holds_slot)
    queued = sum(1 for child in parent.children if child.waiting_to_start)
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


def ready_to_start(parent: AgentHandle, limits: AgentsConfig) -> list[AgentHandle]:
    """The waiting workers of `parent` that free slots let start now, first come first."""
    room = limits.max_threads - capacity_of(parent, limits).running
    waiting = [child for child in parent.children if child.waiting_to_start]
    return waiting[: max(0, room)]
