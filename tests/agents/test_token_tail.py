"""The context size's tail is counted once per item, and afresh for an item that was replaced."""

from __future__ import annotations

from collections.abc import Iterable

from corral.agents._items import Item, Message
from corral.agents._tokens import ByteEstimator, TailCount


class CountingEstimator(ByteEstimator):
    """The default estimate, recording which items it was asked to count."""

    def __init__(self) -> None:
        self.seen: list[Item] = []

    def count_items(self, items: Iterable[Item]) -> int:
        batch = list(items)
        self.seen.extend(batch)
        return super().count_items(batch)


def message(text: str) -> Message:
    return Message(role="user", text=text)


def test_asking_again_for_the_same_tail_counts_nothing_again() -> None:
    counter = CountingEstimator()
    tail = TailCount(counter)
    history = [message("one"), message("two")]
    first = tail.count(history)
    history.append(message("three"))
    second = tail.count(history)
    assert second == tail.count(history) == ByteEstimator().count_items(history)
    assert first < second
    assert counter.seen == history


def test_a_replaced_item_and_a_shorter_tail_are_counted_afresh() -> None:
    tail = TailCount(CountingEstimator())
    history = [message("a" * 400), message("b")]
    tail.count(history)
    history[0] = message("short")
    assert tail.count(history) == ByteEstimator().count_items(history)
    assert tail.count(history[1:]) == ByteEstimator().count_items(history[1:])
    assert tail.count([]) == 0
