"""The seam through which a run's turns recall memories and a finished run is remembered.

`orchestrator.memory.MemoryService` implements it; the runtime only asks it for a fragment
before each turn and, once a run has completed, hands it the root agent's history. Kept as a
protocol so the runtime imports nothing of memory (its embedder brings NumPy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from corral.agents import AgentSpec, Item, ModelClient


class RunMemory(Protocol):
    async def recall(
        self, spec: AgentSpec, query: str, histories: Sequence[Sequence[Item]]
    ) -> str | None:
        """The marked memory fragment for a turn of `spec` on `query` (None: nothing).
        `histories` are the run's agents' live histories (the files the run changed weigh
        in); passed as they are, never copied, so recall reads only what each turn added."""
        ...

    async def after_run(
        self, spec: AgentSpec, task: str, history: Sequence[Item], client: ModelClient
    ) -> object:
        """Remember what a completed run learned (never raises)."""
        ...
