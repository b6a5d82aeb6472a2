"""A costly part made on first use: once, however many threads ask, and a failure not retried."""

from __future__ import annotations

import threading

import pytest

from corral.orchestrator.services._made_once import MadeOnce


def test_threads_that_ask_at_once_get_the_one_value_made_once() -> None:
    made: list[object] = []
    started = threading.Barrier(8, timeout=10)

    def make() -> object:
        made.append(object())
        return made[-1]

    once = MadeOnce(make, lambda exc: None)
    got: list[object] = []

    def ask() -> None:
        started.wait()
        got.append(once.get())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert len(made) == 1
    assert got == made * 8


def test_a_failure_gives_the_stand_in_for_good_without_trying_again() -> None:
    attempts: list[int] = []

    def make() -> str:
        attempts.append(1)
        raise OSError("disk full")

    once = MadeOnce(make, lambda exc: f"stand-in for {exc}")

    assert once.get() == "stand-in for disk full"
    assert once.get() == "stand-in for disk full"
    assert len(attempts) == 1


def test_an_exception_it_does_not_catch_is_the_callers_and_is_tried_again() -> None:
    attempts: list[int] = []

    def make() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise KeyError("first")
        return "made"

    once = MadeOnce(make, lambda exc: "stand-in", catching=(OSError,))

    with pytest.raises(KeyError):
        once.get()
    assert once.get() == "made"
