"""A token bucket with continuous refill, for requests per minute or tokens per minute.

The bucket may go into debt: a charge larger than the whole bucket waits for a full bucket and
then takes the rest on credit, so one oversized request is never stuck yet the average rate holds.
"""

from __future__ import annotations

SECONDS_PER_MINUTE = 60.0


class TokenBucket:
    """`per_minute` units refill evenly over each minute, up to `capacity` units saved up."""

    def __init__(self, per_minute: int, *, burst_seconds: float, now: float) -> None:
        self.per_minute = per_minute
        self._rate = per_minute / SECONDS_PER_MINUTE
        self.capacity = max(1.0, self._rate * burst_seconds)
        self._level = self.capacity
        self._stamp = now

    def level(self, now: float) -> float:
        """Units available at `now` (negative while in debt)."""
        self._refill(now)
        return self._level

    def delay(self, cost: float, now: float) -> float:
        """Seconds until `cost` may be charged (0 if it may be now)."""
        needed = min(cost, self.capacity) - self.level(now)
        return max(0.0, needed / self._rate)

    def charge(self, cost: float, now: float) -> None:
        self._refill(now)
        self._level -= cost

    def refund(self, amount: float, now: float) -> None:
        """Give back `amount` (negative: charge more), never above the capacity."""
        self._refill(now)
        self._level = min(self.capacity, self._level + amount)

    def _refill(self, now: float) -> None:
        elapsed = max(0.0, now - self._stamp)
        self._level = min(self.capacity, self._level + elapsed * self._rate)
        self._stamp = now
