"""Which 429s narrow the concurrency window every worker of an endpoint shares.

Only signs that the endpoint's limit is used up do: `x-ratelimit-remaining-*` at 0, or 429s
making a good share of the endpoint's recent answers. A stray 429 among many answers, or a cut
stream, backs off only its own attempt. Time is a `ManualClock`; attempts run one after another.
"""

from __future__ import annotations

import anyio
import pytest

from corral.agents._config import RateLimit
from corral.agents.model import RateLimitHint
from corral.orchestrator._ratelimit import EndpointLimiter, ManualClock
from corral.orchestrator._ratelimit._signals import DENSE_REFUSALS, RECENT_ANSWERS, RefusalRate

URL = "https://models.example/v1"
DEADLINE = 5
MAXIMUM = 64


async def answer(
    limiter: EndpointLimiter, pattern: str, hint: RateLimitHint | None = None
) -> list[float]:
    """Run one attempt per letter: `x` a 429 (with `hint`), `.` a success, `c` a cut stream;
    the window's size after each."""
    sizes = []
    with anyio.fail_after(DEADLINE):
        for step in pattern:
            async with limiter.attempt(0) as slot:
                if step == "x" and hint is not None:
                    limiter.learn_limits(hint)
                status = {"x": 429, ".": 200, "c": None}[step]
                slot.report(status=status, retry_after=1.0, usage_tokens=None)
            sizes.append(limiter.stats().window)
    return sizes


def limiter() -> EndpointLimiter:
    return EndpointLimiter(URL, RateLimit(max_concurrency=MAXIMUM), clock=ManualClock())


@pytest.mark.anyio
@pytest.mark.parametrize(
    "pattern",
    [
        ("x" + "." * 49) * 10,  # 2% of answers refused, evenly
        ("x" + "." * 15) * 20,  # one in sixteen
        ("xx" + "." * 40) * 8,  # 429s in pairs, but far apart
        ("c" + "." * 9) * 20,  # cut streams say nothing about the endpoint's limits
    ],
    ids=["2%", "6%", "pairs", "cut streams"],
)
async def test_sparse_429s_without_headers_never_narrow_the_shared_window(pattern: str) -> None:
    endpoint = limiter()
    assert set(await answer(endpoint, pattern)) == {MAXIMUM}
    assert endpoint.stats().paused_for == 0


@pytest.mark.anyio
@pytest.mark.parametrize(
    "hint",
    [None, RateLimitHint(requests_per_minute=10**6, remaining_requests=100)],
    ids=["no headers", "headers with room left"],
)
async def test_429s_that_make_one_answer_in_eight_narrow_the_window_once_per_burst(
    hint: RateLimitHint | None,
) -> None:
    endpoint = limiter()
    sizes = await answer(endpoint, "x...x...x...x", hint)
    assert sizes[-2] == MAXIMUM and sizes[-1] == MAXIMUM / 2  # the fourth in 32 answers cuts
    # A further cut needs fresh evidence: three more 429s do not, a fourth does.
    sizes = await answer(endpoint, "x.x.x")
    assert sizes[-1] == MAXIMUM / 2 + 2
    assert (await answer(endpoint, "x"))[-1] == (MAXIMUM / 2 + 2) / 2


@pytest.mark.anyio
@pytest.mark.parametrize(
    "hint",
    [RateLimitHint(remaining_requests=0), RateLimitHint(remaining_tokens=0)],
    ids=["requests used up", "tokens used up"],
)
async def test_a_single_429_that_says_the_limit_is_used_up_narrows_and_pauses_at_once(
    hint: RateLimitHint,
) -> None:
    endpoint = limiter()
    assert await answer(endpoint, "." * 40 + "x", hint) == [MAXIMUM] * 40 + [MAXIMUM / 2]
    assert endpoint.stats().paused_for == 1.0


@pytest.mark.parametrize(
    ("between", "dense"),
    [(RECENT_ANSWERS - DENSE_REFUSALS, True), (RECENT_ANSWERS - DENSE_REFUSALS + 1, False)],
    ids=["within the recent answers", "one answer too far apart"],
)
def test_only_429s_within_the_recent_answers_count_together(between: int, dense: bool) -> None:
    rate = RefusalRate()
    for _ in range(DENSE_REFUSALS - 1):
        assert not rate.refused()
    for _ in range(between):
        rate.answered()
    assert rate.refused() is dense
