"""One model endpoint's limiter: the `AttemptGate` every worker's attempts to it pass through.

Limits come from `[rate_limits]` and, where tighter, from what the endpoint reports in a 429's
`x-ratelimit-limit-*` headers (`learn_limits`), so an unconfigured client paces itself too.

A 429 backs off the attempt that got it (its retry waits out the Retry-After). It pauses every
attempt to the endpoint only when the endpoint's headers say the limit is used up
(`x-ratelimit-remaining-*` at 0), and it cuts the shared AIMD window only then or when 429s are
a good share of the endpoint's recent answers (`_signals`), since a stray 429 from a busy server
says nothing about the requests beside it. An attempt goes out when the endpoint is not paused,
the window has room, and both the requests-per-minute and tokens-per-minute buckets can pay for
it. Waiters are served in arrival order: only the head of the queue watches the clock, so a
refill is not raced for. Every wait is bounded by `wait_timeout`; what the adapter reports
steers the limits.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

import anyio

from corral.agents._config import RateLimit
from corral.agents.model import AttemptSlot, RateLimitHint

from ._bucket import TokenBucket
from ._clock import SYSTEM_CLOCK, Clock
from ._errors import RateLimitConfigError, RateLimitWaitTimeout
from ._signals import RefusalRate
from ._window import AimdWindow

DEFAULT_MAX_CONCURRENCY = 256
"""Requests in flight to one endpoint when `rate_limits` sets no `max_concurrency`; it halves on
a 429 and grows back on successes (`AimdWindow`)."""
MAX_LEASE = 32
"""The most slots one holder keeps between attempts (`lend`)."""
LEASE_SHARE = 8
"""A lease is at most the window's limit over this: with 256 in flight, 32 slots."""
DEFAULT_BURST_SECONDS = 1.0
"""How much of the rate a bucket saves up: one second's worth, as providers quantise limits."""
DEFAULT_WAIT_TIMEOUT = 300.0
# A worker that slept out the Retry-After itself may wake a hair early by the loop's clock; it
# must not queue again for the sliver that is left.
_PAUSE_GRACE = 0.001

PAUSED = "retry_after"
CONCURRENCY = "max_concurrency"
REQUESTS = "requests_per_minute"
TOKENS = "tokens_per_minute"
_QUEUED = "queue"

logger = logging.getLogger(__name__)
WaitObserver = Callable[[str, float, float], None]
"""Told (endpoint, wall-clock time the wait began, seconds waited) after an attempt waited."""
Hold = tuple[str, float | None]
"""What holds the head of the queue, and for how long (None: until an attempt finishes)."""


@dataclass(frozen=True)
class LimiterStats:
    """A snapshot: the AIMD window, attempts in flight, the pause left, 429s seen, how many
    attempts had to wait (by the limit that held them first), and the per-minute limits."""

    window: float
    in_flight: int
    paused_for: float
    rate_limited: int
    waits: dict[str, int]
    requests_per_minute: int | None = None
    """The requests-per-minute limit in force: configured, or learned from the endpoint."""
    tokens_per_minute: int | None = None


class EndpointLimiter:
    """Rate limits shared by every worker that calls `endpoint`; implements `AttemptGate`."""

    def __init__(
        self,
        endpoint: str,
        limit: RateLimit | None = None,
        *,
        clock: Clock = SYSTEM_CLOCK,
        burst_seconds: float = DEFAULT_BURST_SECONDS,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
        on_wait: WaitObserver | None = None,
    ) -> None:
        _check_positive(burst_seconds=burst_seconds, wait_timeout=wait_timeout)
        limit = limit or RateLimit()
        self.endpoint = endpoint
        self.limit = limit
        self._clock = clock
        self._wait_timeout = wait_timeout
        self._burst_seconds = burst_seconds
        self._on_wait = on_wait
        now = clock.now()
        self._requests = _bucket(limit.requests_per_minute, burst_seconds, now)
        self._tokens = _bucket(limit.tokens_per_minute, burst_seconds, now)
        self._window = AimdWindow(limit.max_concurrency or DEFAULT_MAX_CONCURRENCY)
        self._refusals = RefusalRate()
        self._paused_until = float("-inf")
        self._exhausted = False
        self._in_flight = 0
        self._admitted = 0
        self._rate_limited = 0
        self._waits: Counter[str] = Counter()
        self._head: Hold | None = None
        self._queue = anyio.Lock()  # FIFO: attempts go out in the order they asked
        self._freed = anyio.Event()
        self._lending = False
        self._lending_ends = anyio.Event()

    def attempt(self, estimated_tokens: int) -> AbstractAsyncContextManager[AttemptSlot]:
        """Wait for room for an attempt of about `estimated_tokens`; hold it until the block ends.

        Raises `RateLimitWaitTimeout` if no room comes within the limiter's `wait_timeout`.
        """
        return self._admission(max(0, estimated_tokens))

    def lend(self) -> int:
        """How many admitted slots their holder may now keep for later attempts without asking
        again (a worker process's lease); 0 while anything paces single attempts (a request or
        token bucket, a pause), the window is full or somebody waits. A lease is an eighth of
        the window, at most `MAX_LEASE`: a holder that has not yet heard that lending ended
        starts at most that many attempts on kept slots. The holder learns that it ended from
        `lending_ends`."""
        lendable = (
            self._requests is None
            and self._tokens is None
            and self._paused_until <= self._clock.now()
            and not self._queue.locked()
            and self._in_flight < self._window.limit
        )
        self._lending = self._lending or lendable
        return min(MAX_LEASE, max(1, self._window.limit // LEASE_SHARE)) if lendable else 0

    @property
    def lending_ends(self) -> anyio.Event:
        """Set when kept slots must be given back: the window was cut, the endpoint paused,
        a bucket was learned, or an attempt has to wait."""
        return self._lending_ends

    def _stop_lending(self) -> None:
        if self._lending:
            self._lending = False
            self._lending_ends.set()
            self._lending_ends = anyio.Event()

    def learn_limits(self, hint: RateLimitHint) -> None:
        """Pace to the limits the endpoint reported, where they are tighter than ours.

        A learned bucket starts from what the endpoint said is left (empty if it did not say):
        it was just refused, so saving up a burst now would only earn more 429s.
        """
        now = self._clock.now()
        # `run_gated` hands over a failure's hint just before reporting it, with no await in
        # between, so the report that follows is the one this hint came with.
        self._exhausted = 0 in (hint.remaining_requests, hint.remaining_tokens)
        self._requests = self._learned(
            self._requests, hint.requests_per_minute, hint.remaining_requests, now
        )
        self._tokens = self._learned(
            self._tokens, hint.tokens_per_minute, hint.remaining_tokens, now
        )
        if self._exhausted or self._requests is not None or self._tokens is not None:
            self._stop_lending()

    def _learned(
        self, bucket: TokenBucket | None, per_minute: int | None, left: int | None, now: float
    ) -> TokenBucket | None:
        if per_minute is None or (bucket is not None and bucket.per_minute <= per_minute):
            return bucket
        learned = TokenBucket(per_minute, burst_seconds=self._burst_seconds, now=now)
        learned.charge(learned.capacity - min(left or 0, learned.capacity), now)
        logger.info(
            "model endpoint %s reported a limit of %d per minute", self.endpoint, per_minute
        )
        return learned

    def stats(self) -> LimiterStats:
        return LimiterStats(
            window=self._window.size,
            in_flight=self._in_flight,
            paused_for=max(0.0, self._paused_until - self._clock.now()),
            rate_limited=self._rate_limited,
            waits=dict(self._waits),
            requests_per_minute=self._requests.per_minute if self._requests else None,
            tokens_per_minute=self._tokens.per_minute if self._tokens else None,
        )

    @asynccontextmanager
    async def _admission(self, cost: int) -> AsyncIterator[AttemptSlot]:
        slot = await self._admit(cost)
        try:
            yield slot
        finally:
            self._in_flight -= 1
            self._freed.set()
            self._freed = anyio.Event()

    async def _admit(self, cost: int) -> _Slot:
        hold = self._hold(cost)
        if hold is None and not self._queue.locked():
            return self._take(cost)
        self._waits[self._holder(hold)] += 1
        self._stop_lending()
        began, began_wall = self._clock.now(), time.time()
        admitted: _Slot | None = None
        held_by = _QUEUED
        # The deadline is on the limiter's clock (not `anyio.fail_after`) so tests can reach it.
        async with anyio.create_task_group() as group:

            async def alarm() -> None:
                nonlocal held_by
                await self._clock.sleep(self._wait_timeout)
                held_by = self._holder(None)
                group.cancel_scope.cancel()

            group.start_soon(alarm)
            admitted = await self._wait_in_queue(cost)
            group.cancel_scope.cancel()
        self._report_wait(began_wall, self._clock.now() - began)
        if admitted is None:
            raise self._timeout(held_by)
        return admitted

    def _report_wait(self, began_wall: float, waited: float) -> None:
        if self._on_wait is None:
            return
        try:
            self._on_wait(self.endpoint, began_wall, waited)
        except Exception:  # an observer's bug must not hold up or fail an attempt
            logger.exception("rate-limit wait observer failed")

    async def _wait_in_queue(self, cost: int) -> _Slot:
        async with self._queue:
            try:
                while (hold := self._hold(cost)) is not None:
                    self._head = hold
                    if hold[1] is None:
                        await self._freed.wait()
                    else:
                        await self._clock.sleep(hold[1])
            finally:
                self._head = None
            return self._take(cost)

    def _holder(self, own: Hold | None) -> str:
        """The limit holding an attempt: its own, else whatever holds the head of the queue."""
        hold = own or self._head
        return hold[0] if hold is not None else _QUEUED

    def _hold(self, cost: int) -> Hold | None:
        now = self._clock.now()
        if self._paused_until - now > _PAUSE_GRACE:
            return PAUSED, self._paused_until - now
        if self._in_flight >= self._window.limit:
            return CONCURRENCY, None
        for limit, bucket, units in ((REQUESTS, self._requests, 1), (TOKENS, self._tokens, cost)):
            if bucket is not None and (delay := bucket.delay(units, now)) > 0:
                return limit, delay
        return None

    def _take(self, cost: int) -> _Slot:
        now = self._clock.now()
        if self._requests is not None:
            self._requests.charge(1, now)
        if self._tokens is not None:
            self._tokens.charge(cost, now)
        self._in_flight += 1
        self._admitted += 1
        return _Slot(self, self._admitted, cost)

    def _on_report(
        self, slot: _Slot, status: int | None, retry_after: float | None, usage: int | None
    ) -> None:
        now = self._clock.now()
        exhausted, self._exhausted = self._exhausted, False
        if status == 429:
            self._rate_limited += 1
            if retry_after and exhausted:
                self._paused_until = max(self._paused_until, now + retry_after)
            # Only a sign that the limit is used up narrows what every worker may send.
            dense = self._refusals.refused()
            if (exhausted or dense) and self._window.on_rate_limited(slot.number, self._admitted):
                self._refusals.forget()
                self._stop_lending()
        elif status is not None and 200 <= status < 300:
            self._refusals.answered()
            self._window.on_success()
            if usage is not None and self._tokens is not None:
                self._tokens.refund(slot.estimate - usage, now)

    def _timeout(self, limit: str) -> RateLimitWaitTimeout:
        return RateLimitWaitTimeout(
            endpoint=self.endpoint,
            limit=limit,
            detail=self._describe(limit),
            waited=self._wait_timeout,
        )

    def _describe(self, limit: str) -> str:
        if limit == PAUSED:
            left = self.stats().paused_for
            return f"the pause the endpoint asked for with a 429 Retry-After ({left:.3g} s left)"
        if limit == CONCURRENCY:
            return (
                f"the concurrency window ({self._in_flight} in flight, window "
                f"{self._window.limit} of max_concurrency {self._window.maximum})"
            )
        if limit == REQUESTS and self._requests is not None:
            return f"requests_per_minute = {self._requests.per_minute}"
        if limit == TOKENS and self._tokens is not None:
            return f"tokens_per_minute = {self._tokens.per_minute}"
        return "the attempts queued before it"


class _Slot:
    """One admitted attempt; its report steers the limiter (the first report counts)."""

    def __init__(self, limiter: EndpointLimiter, number: int, estimate: int) -> None:
        self._limiter = limiter
        self.number = number
        self.estimate = estimate
        self._reported = False

    def report(
        self, *, status: int | None, retry_after: float | None, usage_tokens: int | None
    ) -> None:
        if not self._reported:
            self._reported = True
            self._limiter._on_report(self, status, retry_after, usage_tokens)

    def again(self, estimate: int) -> _Slot:
        """The slot of a further attempt in this one's place (a lent slot kept by its holder):
        it counts as a new round for the window, and is reported on its own."""
        self._limiter._admitted += 1
        return _Slot(self._limiter, self._limiter._admitted, estimate)


def _bucket(per_minute: int | None, burst_seconds: float, now: float) -> TokenBucket | None:
    if per_minute is None:
        return None
    return TokenBucket(per_minute, burst_seconds=burst_seconds, now=now)


def _check_positive(**options: float) -> None:
    for name, value in options.items():
        if not value > 0:
            raise RateLimitConfigError(f"the rate limiter's {name} must be above 0, not {value}")
