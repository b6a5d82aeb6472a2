"""Call ids made unique within one agent, the same way every time the agent is replayed.

Some OpenAI-compatible servers answer `call_0` for every call, or no id at all. The ledger keys a
call by its id within the agent, and results are matched to calls by it, so a repeated or missing
id is rewritten before anything uses it: `call_0` seen before becomes `call_0~2`, then `call_0~3`;
a missing id becomes `call~1`. The rewrite depends only on the ids seen so far, so a replay of the
journal gives every call the id it had.
"""

from __future__ import annotations

from ._items import FunctionCall, Item

SEPARATOR = "~"
MISSING_BASE = "call"


class CallIds:
    """The call ids one agent has used so far (all of them, whatever compaction dropped)."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        # Where the search for a free suffix starts, per base, so it stays linear.
        self._next: dict[str, int] = {}

    def admit(self, item: Item) -> Item:
        """`item` with its call id made unique, and that id recorded as used."""
        unique = self.preview(item)
        if isinstance(unique, FunctionCall):
            self._seen.add(unique.call_id)
        return unique

    def preview_all(self, items: list[Item]) -> list[Item]:
        """What admitting `items` in order would answer, without recording anything."""
        trial = CallIds()
        trial._seen, trial._next = set(self._seen), dict(self._next)
        return [trial.admit(item) for item in items]

    def preview(self, item: Item) -> Item:
        """What `admit` would answer, without recording anything."""
        if not isinstance(item, FunctionCall):
            return item
        call_id = self._unique(item.call_id)
        if call_id == item.call_id:
            return item
        return item.model_copy(update={"call_id": call_id})

    def _unique(self, call_id: str) -> str:
        if call_id and call_id not in self._seen:
            return call_id
        base = call_id or MISSING_BASE
        n = self._next.get(base, 2 if call_id else 1)
        while f"{base}{SEPARATOR}{n}" in self._seen:
            n += 1
        self._next[base] = n
        return f"{base}{SEPARATOR}{n}"
