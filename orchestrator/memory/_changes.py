"""What a run has changed so far, kept up to date turn by turn instead of rebuilt each turn.

Recall weighs memories by the files the run changed (`_transcript.changed_files`). Each agent's
history only grows between compactions, so `RunChanges` scans each history from where the last
turn left off; a history it has not seen (a new agent, or one compaction replaced) is scanned
whole, which gives the same answer as deriving everything from scratch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from corral.agents import Item

from ._transcript import changed_files


@dataclass
class _Scanned:
    history: Sequence[Item]
    """Held so its `id` cannot be reused by another list while it is cached."""
    length: int = 0
    files: list[str] = field(default_factory=list)


class RunChanges:
    """The files one run's agents changed, scanned incrementally."""

    def __init__(self) -> None:
        self._scanned: dict[int, _Scanned] = {}

    def files(self, histories: Sequence[Sequence[Item]]) -> list[str]:
        """`changed_files` of the histories one after the other, reading only their new items."""
        kept: dict[int, _Scanned] = {}
        found: list[str] = []
        for history in histories:
            entry = self._scanned.get(id(history))
            if entry is None or entry.history is not history or len(history) < entry.length:
                entry = _Scanned(history)
            if len(history) > entry.length:
                entry.files += changed_files(history[entry.length :])
                entry.length = len(history)
            kept[id(history)] = entry
            found += entry.files
        # Histories no longer passed (an agent compacted, a run restored) are let go.
        self._scanned = kept
        return found
