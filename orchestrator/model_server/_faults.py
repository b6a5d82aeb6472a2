"""Which fault, if any, each request gets: first from the scripted plan, then from seeded rates.

One `random.Random(seed)` is drawn exactly once per request, in arrival order, whether or not the
plan decides that request, so the rate-driven faults of request n depend only on n and the seed.
"""

from __future__ import annotations

import random
from collections import deque

from ._options import FaultKind, FaultRates, plan_entry_kind


class FaultPlanner:
    """Decides each request's fault; call `next_fault` once per request, in arrival order."""

    def __init__(self, rates: FaultRates, seed: int, plan: tuple[str, ...]) -> None:
        self._rates = rates
        self._random = random.Random(seed)
        self._plan: deque[FaultKind | None] = deque(plan_entry_kind(entry) for entry in plan)

    def next_fault(self) -> FaultKind | None:
        draw = self._random.random()
        if self._plan:
            return self._plan.popleft()
        return self._from_rates(draw)

    def _from_rates(self, draw: float) -> FaultKind | None:
        threshold = self._rates.fail
        if draw < threshold:
            return "server_error"
        threshold += self._rates.ratelimit
        if draw < threshold:
            return "rate_limited"
        threshold += self._rates.disconnect
        if draw < threshold:
            return "disconnect"
        return None
