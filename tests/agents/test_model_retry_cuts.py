"""How long a model call waits before its next attempt, by what the failed attempt said.

A broken connection or a cut stream carries no word from the server about its load, so it is not
a rate signal: the first in a row is retried at once. A 429 waits out its own Retry-After; a 5xx
and a second break in a row back off. Attempts are scripted and sleeps recorded: nothing waits.
"""

from __future__ import annotations

import anyio
import pytest

from corral.agents.model import RetryPolicy
from corral.agents.model._retry import TransientFailure, run_with_retries

DEADLINE = 5
CUT = TransientFailure("the stream ended before response.completed")
RATE_LIMITED = TransientFailure("HTTP 429: slow down", status=429, retry_after=1.0)
SERVER_ERROR = TransientFailure("HTTP 500: oops", status=500)
TIMED_OUT = TransientFailure("the request timed out")


async def delays_before_success(failures: list[TransientFailure]) -> list[float]:
    """The waits a call asked for while its attempts failed with `failures`, then succeeded."""
    delays: list[float] = []
    script = list(failures)

    async def attempt() -> str:
        if script:
            raise script.pop(0)
        return "answered"

    async def sleep(delay: float) -> None:
        delays.append(delay)

    policy = RetryPolicy(backoff_initial=0.2, backoff_max=20.0)
    with anyio.fail_after(DEADLINE):
        answer = await run_with_retries(attempt, policy=policy, endpoint="e", sleep=sleep)
    assert answer == "answered"
    return delays


@pytest.mark.anyio
@pytest.mark.parametrize("broken", [CUT, TIMED_OUT], ids=["cut stream", "timeout"])
async def test_a_broken_attempt_is_retried_at_once_the_first_time_in_a_row(
    broken: TransientFailure,
) -> None:
    assert await delays_before_success([broken]) == [0.0]


@pytest.mark.anyio
async def test_a_second_break_in_a_row_backs_off_as_any_failure_does() -> None:
    first, second = await delays_before_success([CUT, CUT])
    assert first == 0.0 and 0.36 <= second <= 0.44


@pytest.mark.anyio
async def test_a_break_after_a_refusal_is_again_retried_at_once() -> None:
    delays = await delays_before_success([CUT, RATE_LIMITED, CUT])
    assert delays == [0.0, 1.0, 0.0]


@pytest.mark.anyio
async def test_a_server_error_backs_off_and_a_429_waits_its_own_retry_after() -> None:
    server_error, rate_limited = await delays_before_success([SERVER_ERROR, RATE_LIMITED])
    assert 0.18 <= server_error <= 0.22 and rate_limited == 1.0


@pytest.mark.anyio
async def test_refused_connections_are_not_breaks_and_back_off() -> None:
    refused = TransientFailure("connection refused", refused=True)
    (delay,) = await delays_before_success([refused])
    assert 0.18 <= delay <= 0.22
