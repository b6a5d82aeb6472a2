"""What an endpoint says about its own rate limits, read from OpenAI's `x-ratelimit-*` headers.

The adapters read the headers of a 429 into a `RateLimitHint`; a gate that can use it (a
`LimitLearner`) then paces every later attempt to the endpoint's real limits, instead of
finding them again one 429 at a time. Nothing here waits or decides; it only reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class RateLimitHint:
    """Per-minute limits and what is left of them, as the endpoint reported; None: not sent."""

    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    remaining_requests: int | None = None
    remaining_tokens: int | None = None


@runtime_checkable
class LimitLearner(Protocol):
    """A gate that adopts the limits an endpoint reports."""

    def learn_limits(self, hint: RateLimitHint) -> None: ...


def rate_limit_hint(headers: Mapping[str, str]) -> RateLimitHint | None:
    """The limits in `headers` (OpenAI's names), or None when they name none."""
    hint = RateLimitHint(
        requests_per_minute=_positive(headers.get("x-ratelimit-limit-requests")),
        tokens_per_minute=_positive(headers.get("x-ratelimit-limit-tokens")),
        remaining_requests=_count(headers.get("x-ratelimit-remaining-requests")),
        remaining_tokens=_count(headers.get("x-ratelimit-remaining-tokens")),
    )
    if hint.requests_per_minute is None and hint.tokens_per_minute is None:
        return None
    return hint


def _count(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        number = int(value.strip())
    except ValueError:
        return None
    return number if number >= 0 else None


def _positive(value: str | None) -> int | None:
    number = _count(value)
    return number if number else None
