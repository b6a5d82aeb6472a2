"""Retrying model calls: tenacity is the one owner.

An attempt signals a failure worth retrying by raising `TransientFailure`; anything else ends the
call at once. A call is bounded by a deadline in seconds, not a count of tries: 429s, 5xx, dropped
streams and timeouts are retried until the next attempt would start past it (an optional attempt
cap still applies when one is set). Waits honour the server's `retry-after-ms`/`Retry-After`
exactly, and otherwise back off exponentially with jitter, except that a connection or stream
that broke (no status: the server said nothing about its load, so it is not a rate signal) is
retried at once the first time in a row. Refused connections are the exception:
nothing listens at the endpoint, which is a wrong base URL far more often than a passing fault, so
a few in a row end the call. The last failure becomes a `ModelUnavailable` that names the
endpoint, the attempts, the time spent and the last error.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type

from ._errors import ModelConnectionRefused, ModelUnavailable
from ._limits import RateLimitHint
from ._types import EventCallback, Retrying

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

# Codex's jitter: the exponential step times a factor uniform in [0.9, 1.1).
_JITTER_LOW, _JITTER_HIGH = 0.9, 1.1
_MAX_DOUBLINGS = 30

DEFAULT_RETRY_DEADLINE = 600.0
"""How long one model call keeps retrying transient failures, in seconds."""
REFUSED_ATTEMPTS = 5
"""Refused connections in a row that end a call: nothing listens at the endpoint."""
MAX_RETRY_AFTER = 86_400.0
"""The longest wait an endpoint's `Retry-After` (or "try again in") is taken at, in seconds: a
day. Past the retry deadline a call gives up anyway; the cap keeps absurd answers (a year, `1e400`,
a date in the year 9999) a finite number that a rate limiter can add to its clock."""


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
        self.retry_after = None if retry_after is None else min(retry_after, MAX_RETRY_AFTER)
        self.refused = refused


@dataclass(frozen=True)
class RetryPolicy:
    """How long a call may keep retrying, an optional attempt cap, and the backoff bounds."""

    deadline: float = DEFAULT_RETRY_DEADLINE
    backoff_initial: float = 0.2
    backoff_max: float = 20.0
    max_attempts: int | None = None
    refused_attempts: int = REFUSED_ATTEMPTS

    def stops(self, attempts: int, refused_in_a_row: int, elapsed: float, wait: float) -> bool:
        """Whether to give up after `attempts`, rather than wait `wait` s and try again."""
        if self.max_attempts is not None and attempts >= self.max_attempts:
            return True
        if refused_in_a_row >= self.refused_attempts:
            return True
        return elapsed + wait > self.deadline

    def backoff(self, attempt: int) -> float:
        """The jittered wait after failed attempt number `attempt` (1-based), at most the max."""
        # The exponent is capped: a call retried for minutes would overflow a float otherwise.
        step: float = self.backoff_initial * 2.0 ** min(attempt - 1, _MAX_DOUBLINGS)
        return min(self.backoff_max, step * random.uniform(_JITTER_LOW, _JITTER_HIGH))


async def run_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    endpoint: str,
    sleep: Sleep,
    on_event: EventCallback | None = None,
) -> T:
    """Run `attempt` until it succeeds, a non-transient error escapes, or the deadline passes."""
    started = time.monotonic()
    try:
        return await attempt()
    except TransientFailure as failure:
        first = failure
    # Only a call whose first attempt failed pays for a retrier (a dozen objects and checks).
    return await _retry(
        attempt,
        first,
        time.monotonic() - started,
        policy=policy,
        endpoint=endpoint,
        sleep=sleep,
        on_event=on_event,
    )


async def _retry(
    attempt: Callable[[], Awaitable[T]],
    first: TransientFailure,
    spent: float,
    *,
    policy: RetryPolicy,
    endpoint: str,
    sleep: Sleep,
    on_event: EventCallback | None,
) -> T:
    """The retries after a first attempt that failed with `first`, `spent` seconds ago."""
    tally = _Tally()
    replay = [first]

    async def again() -> T:
        if replay:
            raise replay.pop()  # tenacity's attempt 1 is the one already made
        return await attempt()

    def wait(state: RetryCallState) -> float:
        failure = _failure_of(state)
        tally.note(failure)
        if failure is not None and failure.retry_after is not None:
            return failure.retry_after
        if tally.broken == 1:
            return 0.0  # a cut, not a refusal: the next attempt may well get through
        return policy.backoff(state.attempt_number)

    def stop(state: RetryCallState) -> bool:
        # A test's fake sleep takes no time; the waits asked for count towards the deadline too.
        tally.attempts = state.attempt_number
        tally.elapsed = max((state.seconds_since_start or 0.0) + spent, state.idle_for)
        return policy.stops(tally.attempts, tally.refused, tally.elapsed, state.upcoming_sleep)

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
        stop=stop,
        wait=wait,
        retry=retry_if_exception_type(TransientFailure),
        before_sleep=announce,
        reraise=True,
    )
    try:
        return await retrying(again)
    except TransientFailure as failure:
        raise _unavailable(failure, endpoint, tally.attempts, tally.elapsed) from failure


class _Tally:
    """What one call has been through: attempts, seconds, and refused or broken connections
    (and streams) in a row."""

    def __init__(self) -> None:
        self.attempts = 1
        self.elapsed = 0.0
        self.refused = 0
        self.broken = 0

    def note(self, failure: TransientFailure | None) -> None:
        self.refused = self.refused + 1 if failure is not None and failure.refused else 0
        broke = failure is not None and failure.status is None and not failure.refused
        self.broken = self.broken + 1 if broke else 0


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The server's requested wait: `retry-after-ms`, else `Retry-After` (seconds or a date)."""
    millis = _non_negative(headers.get("retry-after-ms"))
    if millis is not None:
        return min(millis / 1000, MAX_RETRY_AFTER)
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _non_negative(value)
    if seconds is not None:
        return min(seconds, MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, OverflowError):  # a year past what a date can hold
        return None
    return min(max(0.0, when - (time.time() if now is None else now)), MAX_RETRY_AFTER)


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


def _unavailable(
    failure: TransientFailure, endpoint: str, attempts: int, spent: float
) -> ModelUnavailable:
    if failure.refused:
        return ModelConnectionRefused(
            f"model endpoint {endpoint} refused the connection on {attempts} attempts in a row: "
            "check that the model server is running and that the base URL is right",
            attempts=attempts,
            last_status=None,
            cause=failure.reason,
        )
    return ModelUnavailable(
        f"model call to {endpoint} failed after {attempts} attempts over {spent:.1f} s: "
        f"last error {failure.reason}",
        attempts=attempts,
        last_status=failure.status,
        cause=failure.reason,
    )
