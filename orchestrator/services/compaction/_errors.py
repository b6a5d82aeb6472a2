"""Errors of the shared compactor, under corral's shared roots::

    CorralError
    ├── InvalidInput
    │   └── CompactorConfigError     a compactor option is unusable
    └── OperationFailed
        └── ModelError
            └── CompactionSlotTimeout  a summary found no free slot within the deadline

`CompactionSlotTimeout` is a `ModelError` because it ends a summary call: the runner handles it
as it handles any failed summary (a background one falls back, a stalled one fails the agent).
"""

from __future__ import annotations

from corral.agents.model import ModelError
from corral.tools import InvalidInput


class CompactorConfigError(InvalidInput):
    """A compactor option cannot be used; the message says which one and what is allowed."""


class CompactionSlotTimeout(ModelError):
    """A summary waited longer than the compactor's deadline for one of its slots."""

    def __init__(self, *, agent_id: str, capacity: int, waited: float) -> None:
        super().__init__(
            f"agent {agent_id} found no compaction slot within {waited:g} s: all {capacity} "
            "were busy; raise the compactor's max_concurrent or run fewer agents at once"
        )
        self.agent_id = agent_id
        self.waited = waited
