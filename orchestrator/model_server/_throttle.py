"""The server's own rate limits (`--rpm`, `--tpm`): token buckets, 429s and OpenAI's headers.

Each bucket refills continuously at its per-minute rate and saves up one second's worth, so a
client cannot burst past the rate for long and the sustained rate it reaches is measurable. A
request is admitted when both buckets can pay for it; it is then charged its input tokens, and
its output tokens once answered. Every answer carries the `x-ratelimit-*` headers OpenAI sends;
a refusal is a 429 with `retry-after` (seconds) and `retry-after-ms` saying when to come back.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from .._ratelimit import TokenBucket

BURST_SECONDS = 1.0
"""How much of its rate a bucket saves up."""

Headers = list[tuple[str, str]]


@dataclass(frozen=True)
class Verdict:
    """Whether a request may be answered now, and the headers its answer carries."""

    admitted: bool
    retry_after: float
    headers: Headers
    limit: str = ""
    """Which limit refused it: "requests" or "tokens" (empty when admitted)."""


class Throttle:
    """Requests and tokens per minute for the whole server; either may be None (no limit)."""

    def __init__(
        self,
        rpm: int | None,
        tpm: int | None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        now = clock()
        self._requests = _bucket(rpm, now)
        self._tokens = _bucket(tpm, now)
        self.refused = 0

    def admit(self, input_tokens: int) -> Verdict:
        """Charge a request of `input_tokens` if both buckets can pay for it now."""
        now = self._clock()
        waits = {
            "requests": self._requests.delay(1, now) if self._requests else 0.0,
            "tokens": self._tokens.delay(input_tokens, now) if self._tokens else 0.0,
        }
        limit, wait = max(waits.items(), key=lambda pair: pair[1])
        if wait > 0:
            self.refused += 1
            return Verdict(False, wait, self._headers(now, retry_after=wait), limit)
        if self._requests is not None:
            self._requests.charge(1, now)
        if self._tokens is not None:
            self._tokens.charge(input_tokens, now)
        return Verdict(True, 0.0, self._headers(now))

    def charge_output(self, output_tokens: int) -> None:
        """The answer's output tokens count against the tokens per minute too."""
        if self._tokens is not None:
            self._tokens.charge(output_tokens, self._clock())

    def _headers(self, now: float, *, retry_after: float | None = None) -> Headers:
        headers: Headers = []
        for name, bucket in (("requests", self._requests), ("tokens", self._tokens)):
            if bucket is None:
                continue
            level = bucket.level(now)
            refill = (bucket.capacity - level) / (bucket.per_minute / 60)
            headers += [
                (f"x-ratelimit-limit-{name}", str(bucket.per_minute)),
                (f"x-ratelimit-remaining-{name}", str(max(0, math.floor(level)))),
                (f"x-ratelimit-reset-{name}", openai_duration(refill)),
            ]
        if retry_after is not None:
            headers += retry_after_headers(retry_after)
        return headers


def retry_after_headers(seconds: float) -> Headers:
    """A 429's wait: exactly (to the millisecond above) in `retry-after-ms`, and rounded up to
    whole seconds in `Retry-After`, which holds nothing finer (RFC 9110). Clients that know
    `retry-after-ms` (corral, the `openai` SDK) read it first; one that reads only the standard
    header still waits at least as asked."""
    return [
        ("retry-after", str(math.ceil(seconds))),
        ("retry-after-ms", str(math.ceil(seconds * 1000))),
    ]


def openai_duration(seconds: float) -> str:
    """A duration as OpenAI writes it in `x-ratelimit-reset-*`: `1m30s`, `2.5s`, `120ms`."""
    if seconds < 1:
        return f"{max(0, math.ceil(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60)
    text = f"{round(rest, 3):g}s"
    return f"{int(minutes)}m{text}" if minutes else text


def _bucket(per_minute: int | None, now: float) -> TokenBucket | None:
    if per_minute is None:
        return None
    return TokenBucket(per_minute, burst_seconds=BURST_SECONDS, now=now)
