"""Retrying model calls: tenacity is the one owner (the SDK's own retries are off).

An attempt signals a failure worth retrying by raising `TransientFailure`; anything else ends the
call at once. Waits honour the server's `retry-after-ms`/`Retry-After` exactly, and otherwise back
off exponentially with jitter. When the attempts run out, the last failure becomes a
`ModelUnavailable` that names the endpoint, the attempt count and the last error.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from ._errors import ModelConnectionRefused, ModelUnavailable
from ._limits import RateLimitHint
from ._types import EventCallback, Retrying

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

# Codex's jitter: the exponential step times a factor uniform in [0.9, 1.1).
_JITTER_LOW, _JITTER_HIGH = 0.9, 1.1


class TransientFailure(Exception):
    """One attempt failed in a way that may pass on its own (5xx, 429, dropped stream, timeout)."""

    limits: RateLimitHint | None = None
    """The endpoint's own limits, when its answer (a 429) named them."""

    def __init__(
        self,
        reason: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        refused: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after
        self.refused = refused


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts, and the bounds of the backoff between them."""

    max_attempts: int = 5
    backoff_initial: float = 0.2
    backoff_max: float = 20.0

    def backoff(self, attempt: int) -> float:
        """The jittered wait after failed attempt number `attempt` (1-based), at most the max."""
        step: float = self.backoff_initial * 2.0 ** (attempt - 1)
        return min(self.backoff_max, step * random.uniform(_JITTER_LOW, _JITTER_HIGH))


async def run_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    endpoint: str,
    sleep: Sleep,
    on_event: EventCallback | None = None,
) -> T:
    """Run `attempt` until it succeeds, a non-transient error escapes, or attempts run out."""

    def wait(state: RetryCallState) -> float:
        failure = _failure_of(state)
        if failure is not None and failure.retry_after is not None:
            return failure.retry_after
        return policy.backoff(state.attempt_number)

    def announce(state: RetryCallState) -> None:
        if on_event is not None and state.next_action is not None:
            failure = _failure_of(state)
            on_event(
                Retrying(
                    attempt=state.attempt_number,
                    delay=state.next_action.sleep,
                    reason=failure.reason if failure else "unknown error",
                    status=failure.status if failure else None,
                    retry_after=failure.retry_after if failure else None,
                )
            )

    retrying = AsyncRetrying(
        sleep=sleep,
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=retry_if_exception_type(TransientFailure),
        before_sleep=announce,
        reraise=True,
    )
    try:
        return await retrying(attempt)
    except TransientFailure as failure:
        raise _unavailable(failure, endpoint, policy.max_attempts) from failure


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The server's requested wait: `retry-after-ms`, else `Retry-After` (seconds or a date)."""
    millis = _non_negative(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _non_negative(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _non_negative(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number >= 0 else None


def _failure_of(state: RetryCallState) -> TransientFailure | None:
    error = state.outcome.exception() if state.outcome is not None else None
    return error if isinstance(error, TransientFailure) else None


def _unavailable(failure: TransientFailure, endpoint: str, attempts: int) -> ModelUnavailable:
    if failure.refused:
        return ModelConnectionRefused(
            f"model endpoint {endpoint} refused the connection on all {attempts} attempts: "
            "check that the model server is running and that the base URL is right",
            attempts=attempts,
            last_status=None,
            cause=failure.reason,
        )
    return ModelUnavailable(
        f"model call to {endpoint} failed after {attempts} attempts: last error {failure.reason}",
        attempts=attempts,
        last_status=failure.status,
        cause=failure.reason,
    )
