"""The AIMD concurrency window: halve on a 429 that signals exhaustion, grow back on successes.

Which 429s signal exhaustion is the limiter's call (`_signals`); this module only counts.

One burst of 429s is one congestion signal: a 429 from an attempt admitted before the last cut
was sent under the old window and does not cut again, as TCP halves once per round trip. After a
cut the window grows by one per success back to the size it had (TCP's fast recovery: a stray
429 costs about one round at half the window, not dozens), then by one per window of successes.
An endpoint that keeps refusing is cut again each round, so the window settles where it holds.
"""

from __future__ import annotations

# Thirds do not add up exactly in binary; 3 + 1/3 + 1/3 + 1/3 must still allow 4.
_EPSILON = 1e-9


class AimdWindow:
    """How many attempts may be in flight: between 1 and `maximum`, starting at `maximum`."""

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum
        self.size = float(maximum)
        self._cut_after = 0
        self._recover_to = 0.0

    @property
    def limit(self) -> int:
        return max(1, int(self.size + _EPSILON))

    def on_rate_limited(self, admitted_as: int, admitted_so_far: int) -> bool:
        """A 429 for attempt number `admitted_as`; `admitted_so_far` attempts have gone out.
        Whether it cut the window (False: the round's cut was made already)."""
        if admitted_as <= self._cut_after:
            return False
        self._recover_to = self.size
        self.size = max(1.0, self.size / 2)
        self._cut_after = admitted_so_far
        return True

    def on_success(self) -> None:
        """One more in flight per success while recovering from a cut; past the size before
        the cut, one more after as many successes as the window holds."""
        step = 1.0 if self.size + _EPSILON < self._recover_to else 1 / self.limit
        self.size = min(float(self.maximum), self.size + step)
