"""Which 429s are a sign that the endpoint's limit is used up, and so should narrow the window.

A provider that is out of quota says so: its `x-ratelimit-remaining-*` headers are at 0, or, when
it sends none, most requests sent now are refused. A 429 among dozens of answered requests (a busy
replica, a load balancer's hiccup) says nothing about the requests beside it: its own request
waits out its Retry-After, and the shared window stays as it is. `RefusalRate` tells the two apart
by how many of the endpoint's recent answers were 429s.
"""

from __future__ import annotations

from collections import deque

RECENT_ANSWERS = 32
"""How many of the endpoint's latest answers (429 or success) the refusal rate is taken over."""
DENSE_REFUSALS = 4
"""429s among the recent answers that make a refusal a rate signal: one answer in eight. At
random 429s of 2% that happens in about one stretch of 32 answers in three hundred; an endpoint
refusing for want of quota reaches it within a few answers."""


class RefusalRate:
    """The endpoint's recent answers: whether 429s come often enough to mean exhaustion."""

    def __init__(self, recent: int = RECENT_ANSWERS, dense: int = DENSE_REFUSALS) -> None:
        self._answers: deque[bool] = deque(maxlen=recent)
        self._refused = 0
        self._dense = dense

    def answered(self) -> None:
        """A success."""
        self._note(refused=False)

    def refused(self) -> bool:
        """A 429; whether the recent answers now hold enough of them to narrow the window."""
        self._note(refused=True)
        return self._refused >= self._dense

    def forget(self) -> None:
        """The window was just cut: a further cut needs fresh evidence, not the same 429s."""
        self._answers.clear()
        self._refused = 0

    def _note(self, *, refused: bool) -> None:
        if len(self._answers) == self._answers.maxlen and self._answers[0]:
            self._refused -= 1
        self._answers.append(refused)
        self._refused += refused
