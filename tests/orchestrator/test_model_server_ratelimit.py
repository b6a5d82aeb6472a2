"""The scripted server's `--rpm`/`--tpm` buckets, and a client that learns its limits from them.

The buckets are checked on a hand-moved clock; over real HTTP, the numbers are chosen so that
each refusal is certain (the next refill is seconds away) or so that waiting for it is brief.
"""

from __future__ import annotations

import anyio
import httpx2 as httpx
import pytest

from corral.agents._config import RateLimit
from corral.agents._items import Message
from corral.agents.model import (
    ModelRequest,
    ModelResponse,
    ModelSettings,
    RateLimitHint,
    open_model_client,
    rate_limit_hint,
)
from corral.agents.model._failures import failure_from_status
from corral.agents.model._gate import run_gated
from corral.agents.model._retry import TransientFailure
from corral.orchestrator._ratelimit import EndpointLimiter, ManualClock
from corral.orchestrator.model_server import ModelServerOptions, serve_model_server
from corral.orchestrator.model_server._throttle import (
    Throttle,
    openai_duration,
    retry_after_headers,
)
from corral.orchestrator.model_server.examples import echo

DEADLINE = 20
URL = "https://models.example/v1"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_request_bucket_refuses_past_its_rate_and_says_when_to_come_back() -> None:
    clock = Clock()
    throttle = Throttle(rpm=120, tpm=None, clock=clock)  # 2 a second, 2 saved up
    assert throttle.admit(10).admitted and throttle.admit(10).admitted
    refused = throttle.admit(10)
    assert not refused.admitted and refused.limit == "requests"
    assert refused.retry_after == pytest.approx(0.5)
    headers = dict(refused.headers)
    assert headers["x-ratelimit-limit-requests"] == "120"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["x-ratelimit-reset-requests"] == "1s"
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("1", "500")
    clock.now += 0.5
    admitted = throttle.admit(10)
    assert admitted.admitted and "retry-after" not in dict(admitted.headers)
    assert throttle.refused == 1


def test_the_token_bucket_counts_input_on_arrival_and_output_once_answered() -> None:
    clock = Clock()
    throttle = Throttle(rpm=None, tpm=600, clock=clock)  # 10 tokens a second, 10 saved up
    assert throttle.admit(6).admitted
    throttle.charge_output(4)
    refused = throttle.admit(1)
    assert (refused.admitted, refused.limit) == (False, "tokens")
    assert refused.retry_after == pytest.approx(0.1)
    assert dict(refused.headers)["x-ratelimit-limit-tokens"] == "600"
    assert "x-ratelimit-limit-requests" not in dict(refused.headers)


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.12, "120ms"), (0.0, "0ms"), (2.5, "2.5s"), (90.0, "1m30s")]
)
def test_reset_durations_are_written_as_openai_writes_them(seconds: float, text: str) -> None:
    assert openai_duration(seconds) == text


@pytest.mark.anyio
async def test_the_server_answers_429_with_retry_after_once_its_rpm_is_spent() -> None:
    options = ModelServerOptions(rpm=2)  # one request saved up, the next one 30 s later
    async with serve_model_server(echo, options) as server, httpx.AsyncClient() as http:
        body = {"model": "m", "input": "hi"}
        with anyio.fail_after(DEADLINE):
            first = await http.post(f"{server.base_url}/responses", json=body)
            second = await http.post(f"{server.base_url}/responses", json=body)
        stats = server.stats()
    assert first.status_code == 200
    assert first.headers["x-ratelimit-limit-requests"] == "2"
    assert second.status_code == 429
    assert second.json()["error"]["code"] == "rate_limit_exceeded"
    assert 29 <= int(second.headers["retry-after"]) <= 30
    assert second.headers["x-ratelimit-remaining-requests"] == "0"
    assert stats["throttled"] == 1 and stats["requests"]["total"] == 2


def test_a_429s_ratelimit_headers_reach_the_transient_failure() -> None:
    headers = {
        "retry-after-ms": "100",
        "x-ratelimit-limit-requests": "600",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-limit-tokens": "not a number",
    }
    failure = failure_from_status(429, headers, None, "Too Many Requests", URL)
    assert isinstance(failure, TransientFailure)
    assert failure.retry_after == pytest.approx(0.1)
    assert failure.limits == RateLimitHint(requests_per_minute=600, remaining_requests=0)
    assert rate_limit_hint({"x-ratelimit-limit-requests": "0"}) is None


@pytest.mark.anyio
async def test_a_limiter_told_the_endpoints_rpm_paces_every_later_attempt_to_it() -> None:
    clock = ManualClock()
    limiter = EndpointLimiter(URL, clock=clock)
    hint = RateLimitHint(requests_per_minute=60, remaining_requests=0)

    async def refused() -> ModelResponse:
        failure = TransientFailure("HTTP 429", status=429, retry_after=None)
        failure.limits = hint
        raise failure

    with pytest.raises(TransientFailure):
        await run_gated(limiter, 0, refused)
    assert limiter.stats().requests_per_minute == 60
    admitted: list[float] = []

    async def attempt() -> None:
        async with limiter.attempt(0) as slot:
            admitted.append(clock.now())
            slot.report(status=200, retry_after=None, usage_tokens=None)

    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as group:
            for _ in range(2):
                group.start_soon(attempt)
            await anyio.wait_all_tasks_blocked()
            assert admitted == []  # the endpoint said nothing is left: wait for the refill
            for _ in range(2):
                clock.advance(1.0)
                await anyio.wait_all_tasks_blocked()
    assert admitted == [1.0, 2.0]
    assert limiter.stats().waits == {"requests_per_minute": 2}


@pytest.mark.anyio
async def test_a_limiter_never_loosens_a_configured_limit_to_what_the_endpoint_reports() -> None:
    limiter = EndpointLimiter(URL, RateLimit(requests_per_minute=30), clock=ManualClock())
    limiter.learn_limits(RateLimitHint(requests_per_minute=600, tokens_per_minute=1000))
    stats = limiter.stats()
    assert (stats.requests_per_minute, stats.tokens_per_minute) == (30, 1000)


@pytest.mark.anyio
async def test_an_unconfigured_client_learns_the_servers_rpm_from_its_first_429() -> None:
    options = ModelServerOptions(rpm=600)  # ten saved up, then one every 100 ms
    async with serve_model_server(echo, options) as server:
        limiter = EndpointLimiter(server.base_url)
        settings = ModelSettings.resolve(
            model="m", api="responses", base_url=server.base_url, env={}, max_attempts=10
        )
        client = open_model_client(settings, gate=limiter)
        request = ModelRequest(model="m", instructions="", input=[Message(role="user", text="x")])
        try:
            with anyio.fail_after(DEADLINE):
                async with anyio.create_task_group() as group:
                    for _ in range(14):
                        group.start_soon(client.complete, request)
        finally:
            await client.aclose()
        stats = server.stats()
    assert limiter.stats().requests_per_minute == 600
    assert stats["throttled"] >= 1
    assert stats["requests"]["total"] - stats["throttled"] == 14


@pytest.mark.parametrize(
    ("seconds", "whole", "millis"),
    [
        (0.0, "0", "0"),
        (0.05, "1", "50"),
        (0.5, "1", "500"),
        (2.5, "3", "2500"),
        (30.0, "30", "30000"),
    ],
)
def test_a_wait_is_sent_rounded_up_to_whole_seconds_and_exactly_in_milliseconds(
    seconds: float, whole: str, millis: str
) -> None:
    assert retry_after_headers(seconds) == [("retry-after", whole), ("retry-after-ms", millis)]
