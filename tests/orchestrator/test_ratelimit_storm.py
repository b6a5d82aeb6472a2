"""Real adapters sharing one `EndpointLimiter` against the scripted model server.

The storm test runs in real time with small numbers: 40 concurrent calls, 30% of requests
answered 429 with a 50 ms Retry-After, and a requests-per-minute limit that binds. What it checks
is what the server saw (the request timestamps in its log) and, for the rate itself, when the
limiter let each attempt go: the server stamps a request when its event loop gets to it, and on
a loaded machine a stalled loop bunches requests the limiter had spaced out.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from corral.agents._config import RateLimit
from corral.agents._items import Message
from corral.agents.model import (
    AttemptGate,
    AttemptSlot,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    Retrying,
    StreamEvent,
    open_model_client,
)
from corral.orchestrator._ratelimit import EndpointLimiter, ManualClock
from corral.orchestrator.model_server import FaultRates, ModelServerOptions, serve_model_server

CALLS = 40
RPM = 1200
BURST_SECONDS = 0.25
RATE = RPM / 60
CAPACITY = RATE * BURST_SECONDS
MAX_CONCURRENCY = 8
RETRY_AFTER = 0.05
# Transport jitter can bunch requests the limiter spaced out; one or two, never a burst.
JITTER_REQUESTS = 2
STORM_DEADLINE = 20


def ask(text: str) -> ModelRequest:
    return ModelRequest(
        model="m-test", instructions="Be brief.", input=[Message(role="user", text=text)]
    )


def settings_for(base_url: str) -> ModelSettings:
    return ModelSettings.resolve(
        model="m-test", api="responses", base_url=base_url, env={}, max_attempts=10
    )


class _TimedSlot:
    def __init__(self, slot: AttemptSlot, pauses: list[tuple[float, float]]) -> None:
        self._slot = slot
        self._pauses = pauses

    def report(
        self, *, status: int | None, retry_after: float | None, usage_tokens: int | None
    ) -> None:
        if status == 429 and retry_after:
            self._pauses.append((time.time(), retry_after))
        self._slot.report(status=status, retry_after=retry_after, usage_tokens=usage_tokens)


class PauseRecorder:
    """Wraps a gate and notes, on the server log's clock, when each 429 and its pause began."""

    def __init__(self, gate: AttemptGate) -> None:
        self._gate = gate
        self.pauses: list[tuple[float, float]] = []
        self.admitted: list[float] = []

    @asynccontextmanager
    async def attempt(self, estimated_tokens: int) -> AsyncIterator[AttemptSlot]:
        async with self._gate.attempt(estimated_tokens) as slot:
            self.admitted.append(time.time())
            yield _TimedSlot(slot, self.pauses)


def busiest_second(times: list[float]) -> int:
    ordered = sorted(times)
    return max(
        sum(1 for later in ordered[i:] if later < start + 1.0) for i, start in enumerate(ordered)
    )


@pytest.mark.anyio
async def test_a_429_storm_is_absorbed_within_the_configured_rate() -> None:
    limiter = EndpointLimiter(
        "storm",
        RateLimit(requests_per_minute=RPM, max_concurrency=MAX_CONCURRENCY),
        burst_seconds=BURST_SECONDS,
    )
    gate = PauseRecorder(limiter)
    options = ModelServerOptions(
        latency_ms=20, faults=FaultRates(ratelimit=0.3), seed=11, retry_after=RETRY_AFTER
    )
    responses: list[ModelResponse] = []
    with anyio.fail_after(STORM_DEADLINE):
        async with serve_model_server(lambda request: "ok", options) as server:
            client = open_model_client(settings_for(server.base_url), gate=gate)

            async def call(number: int) -> None:
                responses.append(await client.complete(ask(f"call {number}")))

            try:
                async with anyio.create_task_group() as group:
                    for number in range(CALLS):
                        group.start_soon(call, number)
            finally:
                await client.aclose()
            times = [record["time"] for record in server.requests]
            stats = server.stats()
    assert len(responses) == CALLS
    assert stats["faults"]["rate_limited"] == len(gate.pauses) >= 5
    assert len(times) == CALLS + len(gate.pauses)
    assert len(gate.admitted) == len(times)
    assert busiest_second(gate.admitted) <= CAPACITY + RATE + JITTER_REQUESTS
    admitted = gate.admitted
    assert max(admitted) - min(admitted) >= (len(admitted) - CAPACITY - JITTER_REQUESTS) / RATE
    # The storm's 429s carry no `x-ratelimit-remaining-*` at 0: each backs off its own attempt,
    # and at 30% of the answers they narrow the window, but none pauses the attempts beside it.
    assert "retry_after" not in limiter.stats().waits
    assert stats["max_in_flight"] <= MAX_CONCURRENCY


@pytest.mark.anyio
async def test_the_worker_that_got_the_429_waits_out_its_retry_after_only_once() -> None:
    clock = ManualClock()
    limiter = EndpointLimiter("one worker", RateLimit(max_concurrency=4), clock=clock)
    delays: list[float] = []
    events: list[StreamEvent] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)
        clock.advance(delay)

    options = ModelServerOptions(fault_plan=("429", "ok"), retry_after=RETRY_AFTER)
    with anyio.fail_after(STORM_DEADLINE):
        async with serve_model_server(lambda request: "ok", options) as server:
            client = open_model_client(settings_for(server.base_url), sleep=sleep, gate=limiter)
            try:
                response = await client.complete(ask("once"), on_event=events.append)
            finally:
                await client.aclose()
    assert response.attempts == 2
    assert delays == [RETRY_AFTER]
    assert [(e.status, e.delay) for e in events if isinstance(e, Retrying)] == [(429, RETRY_AFTER)]
    stats = limiter.stats()
    assert stats.waits == {}  # the retry went straight out: the pause was already over
    assert (stats.rate_limited, stats.window) == (1, 4)  # a lone 429 narrows nothing
