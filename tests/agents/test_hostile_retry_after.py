"""`Retry-After` (and "try again in" hints) that no clock can hold: a year, `1e400`, infinity,
a date in the year 9999 or past what a date can hold. Each is a finite wait of at most a day,
and a 429 carrying one ends in a model error, never an `OverflowError`."""

from __future__ import annotations

import math

import anyio
import pytest
from anyio.abc import SocketStream

from corral.agents.model import ModelError
from corral.agents.model._failures import failure_from_error_object
from corral.agents.model._retry import MAX_RETRY_AFTER, TransientFailure, retry_after_seconds
from tests.agents._raw_endpoint import complete_through, head, raw_endpoint

pytestmark = pytest.mark.hostile

TEST_DEADLINE = 20

HOSTILE_WAITS = [
    {"retry-after": "1e400"},
    {"retry-after": "inf"},
    {"retry-after-ms": "1e400"},
    {"retry-after-ms": "Infinity"},
    {"retry-after": "31536000"},
    {"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"},
    {"retry-after": "Mon, 01 Jan 99999999999 00:00:00 GMT"},
    {"retry-after": "Mon, 01 Jan 2000000000 00:00:00 GMT"},
]


@pytest.mark.parametrize("headers", HOSTILE_WAITS)
def test_any_retry_after_is_a_finite_wait_of_at_most_a_day(headers: dict[str, str]) -> None:
    wait = retry_after_seconds(headers, now=0.0)
    assert wait is None or (math.isfinite(wait) and 0 <= wait <= MAX_RETRY_AFTER)


@pytest.mark.parametrize("digits", [400, 40])
def test_a_try_again_hint_in_an_error_message_is_capped_too(digits: int) -> None:
    error = {"code": "rate_limit_exceeded", "message": f"Try again in {'9' * digits} s."}
    failure = failure_from_error_object(error, "http://127.0.0.1:1/v1")
    assert isinstance(failure, TransientFailure)
    assert failure.retry_after == MAX_RETRY_AFTER


@pytest.mark.anyio
@pytest.mark.parametrize("headers", HOSTILE_WAITS)
async def test_a_429_with_any_retry_after_ends_in_a_model_error(headers: dict[str, str]) -> None:
    (name, value), *_ = headers.items()

    async def limited(stream: SocketStream) -> None:
        await stream.send(head("429 Too Many Requests", f"{name}: {value}", "Content-Length: 0"))

    with anyio.fail_after(TEST_DEADLINE):
        async with raw_endpoint(limited) as endpoint:
            with pytest.raises(ModelError):
                await complete_through(endpoint.base_url, stream=True)
