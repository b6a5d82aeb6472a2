"""Token accounting: how big the context is, by the provider's word where it has spoken.

The context size is the last response's reported usage plus an estimate for the items added
since. The estimate sits behind `TokenCounter` so an exact tokenizer can replace the default
4-bytes-per-token rule (Codex's `APPROX_BYTES_PER_TOKEN`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Protocol

from ._items import Item

BYTES_PER_TOKEN = 4


class TokenCounter(Protocol):
    """Counts the tokens an item costs in a request."""

    def count_text(self, text: str) -> int: ...

    def count_items(self, items: Iterable[Item]) -> int: ...


class ByteEstimator:
    """Codex's estimate: the UTF-8 size of the serialised item divided by four, rounded up."""

    def count_text(self, text: str) -> int:
        return _ceil_div(len(text.encode()), BYTES_PER_TOKEN)

    def count_items(self, items: Iterable[Item]) -> int:
        return sum(self.count_text(_wire_json(item)) for item in items)


def _wire_json(item: Item) -> str:
    return json.dumps(item.to_wire(), ensure_ascii=False, separators=(",", ":"))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)
