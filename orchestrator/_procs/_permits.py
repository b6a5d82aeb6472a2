"""One rate limiter per endpoint across processes: the parent holds it, workers ask it.

A worker's model clients are gated by a `RemoteGate`: each HTTP attempt asks the parent for a
permit and waits for it; the parent admits the attempt through the endpoint's real
`EndpointLimiter` (the same one it would use in one process) and holds the permit until the
worker says the attempt ended and how (status, Retry-After, billed tokens, the limits a 429
reported). So the in-flight cap, the per-minute buckets, the pauses and the AIMD window are one
set of numbers for every process, and a 429 in one worker narrows the window for all.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup

from corral.agents.model import RateLimitHint

from .._ratelimit import DEFAULT_WAIT_TIMEOUT, RateLimiterRegistry, RateLimitWaitTimeout
from ._wire import Channel, Message

PERMIT_TIMEOUT = DEFAULT_WAIT_TIMEOUT + 30.0
"""A worker's longest wait for a permit: the parent's limiter times out first and says why."""
_HINT_FIELDS = (
    "requests_per_minute",
    "tokens_per_minute",
    "remaining_requests",
    "remaining_tokens",
)


class _RemoteSlot:
    """What the adapter reports about one attempt, kept until the permit is given back."""

    def __init__(self) -> None:
        self.report_fields: dict[str, Any] | None = None

    def report(
        self, *, status: int | None, retry_after: float | None, usage_tokens: int | None
    ) -> None:
        if self.report_fields is None:
            self.report_fields = {
                "status": status,
                "retry_after": retry_after,
                "usage": usage_tokens,
            }


@dataclass
class _Waiter:
    granted: anyio.Event = field(default_factory=anyio.Event)
    refusal: str | None = None
    limit: str = ""


class RemoteGate:
    """A worker's `AttemptGate` for one endpoint: permits come from the parent's limiter."""

    def __init__(self, endpoint: str, desk: PermitClient) -> None:
        self.endpoint = endpoint
        self._desk = desk
        self._hint: RateLimitHint | None = None

    def learn_limits(self, hint: RateLimitHint) -> None:
        # Handed over just before the attempt's report with no await between (`run_gated`): it
        # travels with that report, so the parent applies both in the same order.
        self._hint = hint

    def attempt(self, estimated_tokens: int) -> AbstractAsyncContextManager[_RemoteSlot]:
        return self._attempt(max(0, estimated_tokens))

    @asynccontextmanager
    async def _attempt(self, tokens: int) -> AsyncIterator[_RemoteSlot]:
        number = await self._desk.acquire(self.endpoint, tokens)
        slot = _RemoteSlot()
        try:
            yield slot
        finally:
            hint, self._hint = self._hint, None
            self._desk.release(number, slot.report_fields, hint)


class PermitClient:
    """A worker's side of the permits: numbered requests, answered by the parent in any order."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel
        self._numbers = itertools.count(1)
        self._waiting: dict[int, _Waiter] = {}
        self._gates: dict[str, RemoteGate] = {}

    def gate_for(self, endpoint: str) -> RemoteGate:
        gate = self._gates.get(endpoint)
        if gate is None:
            gate = self._gates[endpoint] = RemoteGate(endpoint, self)
        return gate

    async def acquire(self, endpoint: str, tokens: int) -> int:
        number = next(self._numbers)
        waiter = self._waiting[number] = _Waiter()
        self._channel.post({"op": "attempt", "id": number, "endpoint": endpoint, "tokens": tokens})
        try:
            with anyio.fail_after(PERMIT_TIMEOUT):
                await waiter.granted.wait()
        except BaseException:
            # Cancelled (or timed out) while waiting: the parent must not hold the permit.
            self.release(number, None, None)
            raise
        finally:
            self._waiting.pop(number, None)
        if waiter.refusal is not None:
            raise RateLimitWaitTimeout(
                endpoint=endpoint, limit=waiter.limit, detail=waiter.refusal, waited=0.0
            )
        return number

    def release(
        self, number: int, report: dict[str, Any] | None, hint: RateLimitHint | None
    ) -> None:
        message: Message = {"op": "release", "id": number, "report": report}
        if hint is not None:
            message["hint"] = {name: getattr(hint, name) for name in _HINT_FIELDS}
        self._channel.post(message)

    def answer(self, message: Message) -> None:
        """A `grant` or `refuse` from the parent."""
        waiter = self._waiting.get(int(message["id"]))
        if waiter is None:
            return
        if message["op"] == "refuse":
            waiter.refusal, waiter.limit = str(message["detail"]), str(message["limit"])
        waiter.granted.set()


class PermitDesk:
    """The parent's side: one task per attempt holds a real limiter slot for a worker."""

    def __init__(self, limiters: RateLimiterRegistry, channel: Channel, tg: TaskGroup) -> None:
        self._limiters = limiters
        self._channel = channel
        self._tg = tg
        self._held: dict[int, _Held] = {}

    def ask(self, message: Message) -> None:
        held = self._held[int(message["id"])] = _Held()
        number, tokens = int(message["id"]), int(message["tokens"])
        self._tg.start_soon(self._serve, number, str(message["endpoint"]), tokens, held)

    def give_back(self, message: Message) -> None:
        held = self._held.pop(int(message["id"]), None)
        if held is None:
            return
        held.report = message.get("report")
        held.hint = message.get("hint")
        held.released.set()
        if not held.granted:
            held.scope.cancel()  # the worker stopped waiting before its permit came

    def drop_all(self) -> None:
        """The worker is gone: every permit it held or waited for is given back."""
        for held in self._held.values():
            held.scope.cancel()
        self._held.clear()

    async def _serve(self, number: int, endpoint: str, tokens: int, held: _Held) -> None:
        limiter = self._limiters.limiter_for(endpoint)
        with held.scope:
            try:
                async with limiter.attempt(tokens) as slot:
                    held.granted = True
                    self._channel.post({"op": "grant", "id": number})
                    await held.released.wait()  # the worker always answers, or its channel ends
                    if held.hint is not None:
                        limiter.learn_limits(RateLimitHint(**held.hint))
                    if held.report is not None:
                        slot.report(
                            status=held.report["status"],
                            retry_after=held.report["retry_after"],
                            usage_tokens=held.report["usage"],
                        )
            except RateLimitWaitTimeout as exc:
                self._held.pop(number, None)
                self._channel.post(
                    {"op": "refuse", "id": number, "limit": exc.limit, "detail": exc.detail}
                )


@dataclass
class _Held:
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    released: anyio.Event = field(default_factory=anyio.Event)
    granted: bool = False
    report: dict[str, Any] | None = None
    hint: dict[str, Any] | None = None
