"""Token accounting: how big the context is, by the provider's word where it has spoken.

The context size is the last response's reported usage plus an estimate for the items added
since. The estimate sits behind `TokenCounter` so an exact tokenizer can replace the default
4-bytes-per-token rule (Codex's `APPROX_BYTES_PER_TOKEN`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from ._items import Item, Message
from ._json import dumps_utf8

BYTES_PER_TOKEN = 4
IMAGE_TOKENS = 1_000
"""What one image is counted as: providers bill an image by its tiles, not by its base64
size, which would otherwise count a screenshot as a few hundred thousand tokens."""


class TokenCounter(Protocol):
    """Counts the tokens an item costs in a request."""

    def count_text(self, text: str) -> int: ...

    def count_items(self, items: Iterable[Item]) -> int: ...


class ByteEstimator:
    """Codex's estimate: the UTF-8 size of the serialised item divided by four, rounded up."""

    def count_text(self, text: str) -> int:
        return _ceil_div(len(text.encode()), BYTES_PER_TOKEN)

    def count_items(self, items: Iterable[Item]) -> int:
        return sum(self._count_item(item) for item in items)

    def _count_item(self, item: Item) -> int:
        if isinstance(item, Message) and item.images:
            text_only = item.model_copy(update={"images": ()})
            return _wire_tokens(text_only) + IMAGE_TOKENS * len(item.images)
        return _wire_tokens(item)


class TailCount:
    """The tokens of the items after the last reported usage, each item counted once.

    The context size is asked for several times a turn (the compaction check, the spend
    estimate, the budget), and each time the tail was serialised again. Items are frozen, so an
    item that is the same object as last time has the same count; one replaced (an image
    retired, a history rebuilt) is not the same object and is counted afresh. (A counter's
    count of several items is the sum of its counts of each, as `ByteEstimator`'s is.)
    """

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self._counted: list[tuple[Item, int]] = []

    def count(self, tail: Sequence[Item]) -> int:
        kept = 0
        limit = min(len(tail), len(self._counted))
        while kept < limit and self._counted[kept][0] is tail[kept]:
            kept += 1
        del self._counted[kept:]
        self._counted.extend((item, self._counter.count_items((item,))) for item in tail[kept:])
        return sum(tokens for _, tokens in self._counted)


def _wire_tokens(item: Item) -> int:
    """`count_text` of the item's compact JSON, counted on the encoded bytes themselves."""
    return _ceil_div(len(dumps_utf8(item.to_wire())), BYTES_PER_TOKEN)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)
