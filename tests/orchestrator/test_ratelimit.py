"""The endpoint limiter and its registry, with time moved by hand on a `ManualClock`.

Attempts run as tasks; `anyio.wait_all_tasks_blocked` tells when each has got as far as it can,
so every assertion is about what was admitted at a given moment of the manual clock.
"""

from __future__ import annotations

from contextlib import AsyncExitStack

import anyio
import pytest
from anyio.abc import TaskGroup

from corral.agents._config import CorralConfig, RateLimit
from corral.agents.model import AttemptSlot, RateLimitHint
from corral.orchestrator._ratelimit import (
    DEFAULT_MAX_CONCURRENCY,
    AimdWindow,
    EndpointLimiter,
    ManualClock,
    RateLimitConfigError,
    RateLimiterRegistry,
    RateLimitWaitTimeout,
)

URL = "https://models.example/v1"
DEADLINE = 5


async def start(
    group: TaskGroup,
    limiter: EndpointLimiter,
    admitted: list[str],
    name: str,
    *,
    tokens: int = 0,
    hold: anyio.Event | None = None,
) -> None:
    """Start an attempt that succeeds, and wait until it is admitted or stuck."""

    async def attempt() -> None:
        async with limiter.attempt(tokens) as slot:
            admitted.append(name)
            if hold is not None:
                await hold.wait()
            slot.report(status=200, retry_after=None, usage_tokens=None)

    group.start_soon(attempt)
    await anyio.wait_all_tasks_blocked()


async def advance(clock: ManualClock, seconds: float) -> None:
    clock.advance(seconds)
    await anyio.wait_all_tasks_blocked()


async def enter(stack: AsyncExitStack, limiter: EndpointLimiter, tokens: int = 0) -> AttemptSlot:
    return await stack.enter_async_context(limiter.attempt(tokens))


@pytest.mark.anyio
async def test_requests_beyond_the_burst_go_out_one_per_refill_in_arrival_order() -> None:
    clock = ManualClock()
    limit = RateLimit(requests_per_minute=60)
    limiter = EndpointLimiter(URL, limit, clock=clock, burst_seconds=2)
    admitted: list[str] = []
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as group:
            for name in "abcd":
                await start(group, limiter, admitted, name)
            assert admitted == ["a", "b"]
            await advance(clock, 0.5)
            assert admitted == ["a", "b"]
            await advance(clock, 0.5)
            assert admitted == ["a", "b", "c"]
            await advance(clock, 1.0)
    assert admitted == ["a", "b", "c", "d"]
    assert limiter.stats().waits == {"requests_per_minute": 2}


@pytest.mark.anyio
async def test_tokens_per_minute_hold_an_attempt_while_requests_have_room() -> None:
    clock = ManualClock()
    limit = RateLimit(requests_per_minute=6000, tokens_per_minute=600)
    limiter = EndpointLimiter(URL, limit, clock=clock, burst_seconds=10)
    admitted: list[str] = []
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as group:
            await start(group, limiter, admitted, "first", tokens=80)
            await start(group, limiter, admitted, "second", tokens=80)
            assert admitted == ["first"]
            await advance(clock, 5.5)
            assert admitted == ["first"]
            await advance(clock, 0.5)
    assert admitted == ["first", "second"]
    assert limiter.stats().waits == {"tokens_per_minute": 1}


@pytest.mark.anyio
async def test_reported_usage_corrects_the_token_estimate_both_ways() -> None:
    clock = ManualClock()
    limit = RateLimit(tokens_per_minute=600)
    limiter = EndpointLimiter(URL, limit, clock=clock, burst_seconds=10)
    admitted: list[str] = []
    with anyio.fail_after(DEADLINE):
        async with limiter.attempt(90) as slot:
            slot.report(status=200, retry_after=None, usage_tokens=10)
        async with limiter.attempt(90) as slot:
            slot.report(status=200, retry_after=None, usage_tokens=190)
        assert limiter.stats().waits == {}
        async with anyio.create_task_group() as group:
            # 100 tokens in debt: 10 more need 11 s of refill.
            await start(group, limiter, admitted, "after the overrun", tokens=10)
            await advance(clock, 10.5)
            assert admitted == []
            await advance(clock, 0.5)
    assert admitted == ["after the overrun"]


@pytest.mark.anyio
async def test_an_attempt_larger_than_the_bucket_goes_out_and_its_debt_holds_the_next() -> None:
    clock = ManualClock()
    limiter = EndpointLimiter(URL, RateLimit(tokens_per_minute=600), clock=clock, burst_seconds=10)
    admitted: list[str] = []
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as group:
            await start(group, limiter, admitted, "oversized", tokens=500)
            await start(group, limiter, admitted, "next", tokens=10)
            await advance(clock, 40.5)
            assert admitted == ["oversized"]
            await advance(clock, 0.5)
    assert admitted == ["oversized", "next"]


USED_UP = RateLimitHint(remaining_requests=0)
"""What a 429 says when the endpoint's limit is used up (no limit named: only the pause holds)."""


@pytest.mark.anyio
async def test_a_429_that_says_the_limit_is_used_up_pauses_every_attempt_until_it_ends() -> None:
    clock = ManualClock()
    limiter = EndpointLimiter(URL, clock=clock)
    admitted: list[str] = []
    with anyio.fail_after(DEADLINE):
        async with AsyncExitStack() as stack:
            first, second = await enter(stack, limiter), await enter(stack, limiter)
            limiter.learn_limits(USED_UP)
            first.report(status=429, retry_after=2.0, usage_tokens=None)
            limiter.learn_limits(USED_UP)
            second.report(status=429, retry_after=0.5, usage_tokens=None)
        assert limiter.stats().paused_for == 2.0  # a shorter Retry-After never shortens it
        async with anyio.create_task_group() as group:
            for name in ("worker 1", "worker 2", "worker 3"):
                await start(group, limiter, admitted, name)
            await advance(clock, 1.5)
            assert admitted == []
            await advance(clock, 0.5)
            assert admitted == ["worker 1", "worker 2", "worker 3"]
    assert limiter.stats().waits == {"retry_after": 3}


@pytest.mark.anyio
@pytest.mark.parametrize(
    "hint",
    [
        None,
        RateLimitHint(requests_per_minute=60_000, remaining_requests=5),
        RateLimitHint(tokens_per_minute=10**9, remaining_tokens=10**6),
    ],
    ids=["no headers", "requests left", "tokens left"],
)
async def test_a_429_with_room_left_backs_off_only_its_own_attempt(
    hint: RateLimitHint | None,
) -> None:
    clock = ManualClock()
    limiter = EndpointLimiter(URL, RateLimit(max_concurrency=8), clock=clock)
    admitted: list[str] = []
    with anyio.fail_after(DEADLINE):
        async with limiter.attempt(0) as slot:
            if hint is not None:
                limiter.learn_limits(hint)
            slot.report(status=429, retry_after=30.0, usage_tokens=None)
        async with anyio.create_task_group() as group:
            for name in ("worker 1", "worker 2"):
                await start(group, limiter, admitted, name)
    assert admitted == ["worker 1", "worker 2"]
    # A lone 429 is not a sign of exhaustion: the window every worker shares stays whole.
    assert (limiter.stats().paused_for, limiter.stats().window) == (0.0, 8)


@pytest.mark.anyio
async def test_a_used_up_hint_counts_only_for_the_429_it_came_with() -> None:
    clock = ManualClock()
    limiter = EndpointLimiter(URL, clock=clock)
    with anyio.fail_after(DEADLINE):
        async with limiter.attempt(0) as slot:
            limiter.learn_limits(USED_UP)
            slot.report(status=200, retry_after=None, usage_tokens=None)
        async with limiter.attempt(0) as slot:
            slot.report(status=429, retry_after=30.0, usage_tokens=None)
    assert limiter.stats().paused_for == 0.0


def window_after(maximum: int, steps: str) -> list[float]:
    """The window's size after each step: `x` a 429 from an attempt sent after the last cut,
    `o` a 429 sent before it, `.` a success."""
    window = AimdWindow(maximum)
    sizes = []
    for admitted, step in enumerate(steps, 1):
        if step == ".":
            window.on_success()
        else:
            window.on_rate_limited(admitted if step == "x" else 0, admitted)
        sizes.append(window.size)
    return sizes


@pytest.mark.parametrize(
    ("maximum", "steps", "sizes"),
    [
        (8, "x....", [4, 5, 6, 7, 8]),  # one back per success up to where it was
        (8, "x....." + "." * 8, [4, 5, 6, 7, 8, 8, *[8] * 8]),  # never past the maximum
        (16, "xx...", [8, 4, 5, 6, 7]),  # a second round's 429 cuts again
        (8, "xoo..", [4, 4, 4, 5, 6]),  # 429s sent before the cut are the same signal
        (4, "xxxx.", [2, 1, 1, 1, 2]),  # the window stops at one
        (8, "xx....", [4, 2, 3, 4, 4.25, 4.5]),  # past the old size: one per window of successes
    ],
)
def test_the_aimd_window_halves_once_per_round_and_recovers_one_per_success(
    maximum: int, steps: str, sizes: list[float]
) -> None:
    assert window_after(maximum, steps) == pytest.approx(sizes)


@pytest.mark.anyio
async def test_a_burst_of_429s_halves_the_window_once_and_new_attempts_wait_for_it() -> None:
    clock = ManualClock()
    limiter = EndpointLimiter(URL, RateLimit(max_concurrency=8), clock=clock)
    admitted: list[str] = []
    with anyio.fail_after(DEADLINE):
        async with AsyncExitStack() as stack:
            slots = [await enter(stack, limiter) for _ in range(8)]
            for slot in slots[:5]:
                slot.report(status=429, retry_after=None, usage_tokens=None)
        assert limiter.stats().window == 4
        async with AsyncExitStack() as stack, anyio.create_task_group() as group:
            held = [await enter(stack, limiter) for _ in range(4)]
            await start(group, limiter, admitted, "fifth")
            assert admitted == []
            held[0].report(status=500, retry_after=None, usage_tokens=None)
            await stack.aclose()
            await anyio.wait_all_tasks_blocked()
            assert admitted == ["fifth"]
    assert limiter.stats().waits == {"max_concurrency": 1}


@pytest.mark.anyio
async def test_the_window_stops_at_one_and_grows_back_by_one_per_window_of_successes() -> None:
    limiter = EndpointLimiter(URL, RateLimit(max_concurrency=4), clock=ManualClock())

    async def attempts(status: int, count: int) -> None:
        for _ in range(count):
            async with limiter.attempt(0) as slot:
                if status == 429:
                    limiter.learn_limits(USED_UP)
                slot.report(status=status, retry_after=None, usage_tokens=None)

    windows = []
    with anyio.fail_after(DEADLINE):
        await attempts(429, 3)
        windows.append(limiter.stats().window)
        for successes in (1, 2, 3, 4):
            await attempts(200, successes)
            windows.append(limiter.stats().window)
    assert windows == pytest.approx([1, 2, 3, 4, 4])


@pytest.mark.anyio
async def test_an_attempt_held_past_the_deadline_fails_naming_the_endpoint_and_the_limit() -> None:
    clock = ManualClock()
    limiter = EndpointLimiter(URL, RateLimit(requests_per_minute=1), clock=clock, wait_timeout=10)

    async def time_passes() -> None:
        await anyio.wait_all_tasks_blocked()
        clock.advance(10)

    with anyio.fail_after(DEADLINE):
        async with limiter.attempt(0):
            pass
        async with anyio.create_task_group() as group:
            group.start_soon(time_passes)
            with pytest.raises(RateLimitWaitTimeout) as caught:
                async with limiter.attempt(0):
                    pass
        await advance(clock, 50)
        async with limiter.attempt(0):
            pass  # the one that gave up took nothing from the bucket
    assert str(caught.value) == (
        f"no slot for a request to model endpoint {URL} within 10 s: held by "
        "requests_per_minute = 1; raise [rate_limits] for this endpoint, run fewer agents at "
        "once, or wait for the provider's limit to reset"
    )
    assert (caught.value.endpoint, caught.value.limit) == (URL, "requests_per_minute")


def test_registry_gives_each_endpoint_one_limiter_with_its_own_limits_or_the_default() -> None:
    limits = {
        "https://API.openai.com/v1/": RateLimit(requests_per_minute=500),
        "default": RateLimit(requests_per_minute=60),
    }
    registry = RateLimiterRegistry.from_config(CorralConfig(rate_limits=limits))
    openai = registry.limiter_for("https://api.openai.com/v1")
    assert registry.limiter_for("https://api.openai.com/v1/") is openai
    assert openai.limit.requests_per_minute == 500
    local = registry.limiter_for("http://127.0.0.1:8000/v1")
    assert local is not openai
    assert local.limit.requests_per_minute == 60


def test_registry_without_a_matching_key_limits_only_by_429s() -> None:
    limiter = RateLimiterRegistry().limiter_for("http://127.0.0.1:8000/v1")
    assert limiter.limit == RateLimit()
    assert limiter.stats().window == DEFAULT_MAX_CONCURRENCY


def test_registry_rejects_a_rate_limit_key_that_is_not_a_base_url() -> None:
    with pytest.raises(RateLimitConfigError) as caught:
        RateLimiterRegistry({"api.openai.com": RateLimit(requests_per_minute=5)})
    assert str(caught.value) == (
        "[rate_limits] key 'api.openai.com' is not a base URL; use the endpoint's base URL, "
        'e.g. [rate_limits."https://api.openai.com/v1"], or [rate_limits.default]'
    )
