"""One rate limiter per endpoint across processes: the parent holds it, workers ask it.

A worker's model clients are gated by a `RemoteGate`: an HTTP attempt asks the parent for a
permit and waits for it; the parent admits the attempt through the endpoint's real
`EndpointLimiter` (the same one it would use in one process) and holds the permit until the
worker gives it back, telling how each attempt under it ended (status, Retry-After, billed
tokens, the limits a 429 reported). So the in-flight cap, the per-minute buckets, the pauses and
the AIMD window are one set of numbers for every process.

A lease saves the round trip: while the limiter lends (`EndpointLimiter.lend`: no bucket or pause
paces single attempts, the window has room, nobody waits), a grant says how many permits the
worker may keep once their attempt ended (`keep`: an eighth of the window, at most 32); its
next attempts take a kept permit at once and only report how they ended. Kept permits still
count as in flight in the parent, so the cap holds. When lending ends (a cut, a pause, a learned
bucket, an attempt that must wait) the parent says `revoke` and the worker gives every kept
permit back; until the word arrives a worker may start at most its kept permits' worth of
attempts (one message's delay, as for the budget).
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

from .._ratelimit import (
    DEFAULT_WAIT_TIMEOUT,
    EndpointLimiter,
    RateLimiterRegistry,
    RateLimitWaitTimeout,
)
from ._wire import Channel, Message

PERMIT_TIMEOUT = DEFAULT_WAIT_TIMEOUT + 30.0
"""A worker's longest wait for a permit: the parent's limiter times out first and says why."""
_HINT_FIELDS = (
    "requests_per_minute",
    "tokens_per_minute",
    "remaining_requests",
    "remaining_tokens",
)
Outcome = tuple[dict[str, Any] | None, dict[str, Any] | None, int]
"""What a worker said of one attempt under a permit: its report, its hint, its token estimate."""


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
    gate: RemoteGate
    granted: anyio.Event = field(default_factory=anyio.Event)
    refusal: str | None = None
    limit: str = ""


class RemoteGate:
    """A worker's `AttemptGate` for one endpoint: permits come from the parent's limiter."""

    def __init__(self, endpoint: str, desk: PermitClient) -> None:
        self.endpoint = endpoint
        self._desk = desk
        self._hint: RateLimitHint | None = None
        self.kept: list[int] = []
        """Permits granted and kept between attempts, for the next ones."""
        self.keep = 0

    def learn_limits(self, hint: RateLimitHint) -> None:
        # Handed over just before the attempt's report with no await between (`run_gated`): it
        # travels with that report, so the parent applies both in the same order.
        self._hint = hint

    def attempt(self, estimated_tokens: int) -> AbstractAsyncContextManager[_RemoteSlot]:
        return self._attempt(max(0, estimated_tokens))

    @asynccontextmanager
    async def _attempt(self, tokens: int) -> AsyncIterator[_RemoteSlot]:
        number = self.kept.pop() if self.kept else await self._desk.acquire(self, tokens)
        slot = _RemoteSlot()
        try:
            yield slot
        finally:
            hint, self._hint = self._hint, None
            outcome = (slot.report_fields, _hint_fields(hint), tokens)
            if len(self.kept) < self.keep:
                self.kept.append(number)
                self._desk.post({"op": "used", "id": number, "outcome": outcome})
            else:
                self._desk.post({"op": "release", "id": number, "outcome": outcome})

    def revoke(self) -> None:
        """The parent stopped lending: give back every kept permit, keep none until told."""
        self.keep = 0
        for number in self.kept:
            self._desk.post({"op": "release", "id": number, "outcome": None})
        self.kept.clear()


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

    def post(self, message: Message) -> None:
        self._channel.post(message)

    async def acquire(self, gate: RemoteGate, tokens: int) -> int:
        number = next(self._numbers)
        waiter = self._waiting[number] = _Waiter(gate)
        self.post({"op": "attempt", "id": number, "endpoint": gate.endpoint, "tokens": tokens})
        try:
            with anyio.fail_after(PERMIT_TIMEOUT):
                await waiter.granted.wait()
        except BaseException:
            # Cancelled (or timed out) while waiting: the parent must not hold the permit.
            self.post({"op": "release", "id": number, "outcome": None})
            raise
        finally:
            self._waiting.pop(number, None)
        if waiter.refusal is not None:
            raise RateLimitWaitTimeout(
                endpoint=gate.endpoint, limit=waiter.limit, detail=waiter.refusal, waited=0.0
            )
        return number

    def answer(self, message: Message) -> None:
        """A `grant`, `refuse` or `revoke` from the parent."""
        if message["op"] == "revoke":
            gate = self._gates.get(str(message["endpoint"]))
            if gate is not None:
                gate.revoke()
            return
        waiter = self._waiting.get(int(message["id"]))
        if waiter is None:
            return
        if message["op"] == "refuse":
            waiter.refusal, waiter.limit = str(message["detail"]), str(message["limit"])
        # The lease is taken up now, in the order the parent's words came: applied when the
        # waiting attempt resumes, it would undo a `revoke` read in the same batch.
        waiter.gate.keep = int(message.get("keep", 0))
        waiter.granted.set()


class PermitDesk:
    """The parent's side: one task per permit holds a real limiter slot for a worker."""

    def __init__(self, limiters: RateLimiterRegistry, channel: Channel, tg: TaskGroup) -> None:
        self._limiters = limiters
        self._channel = channel
        self._tg = tg
        self._held: dict[int, _Held] = {}
        self._watched: set[str] = set()

    def ask(self, message: Message) -> None:
        held = self._held[int(message["id"])] = _Held()
        number, tokens = int(message["id"]), int(message["tokens"])
        self._tg.start_soon(self._serve, number, str(message["endpoint"]), tokens, held)

    def used(self, message: Message) -> None:
        """An attempt under a kept permit ended; the worker keeps the permit."""
        held = self._held.get(int(message["id"]))
        if held is not None:
            held.tell(message.get("outcome"))

    def give_back(self, message: Message) -> None:
        held = self._held.pop(int(message["id"]), None)
        if held is None:
            return
        held.released = True
        held.tell(message.get("outcome"))
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
                    keep = limiter.lend()
                    if keep:
                        self._watch(endpoint, limiter)
                    self._channel.post({"op": "grant", "id": number, "keep": keep})
                    await _apply_until_released(limiter, slot, held)
            except RateLimitWaitTimeout as exc:
                self._held.pop(number, None)
                self._channel.post(
                    {"op": "refuse", "id": number, "limit": exc.limit, "detail": exc.detail}
                )

    def _watch(self, endpoint: str, limiter: EndpointLimiter) -> None:
        if endpoint not in self._watched:
            self._watched.add(endpoint)
            self._tg.start_soon(self._revoke_when_lending_ends, endpoint, limiter)

    async def _revoke_when_lending_ends(self, endpoint: str, limiter: EndpointLimiter) -> None:
        while True:  # until the worker's channel is done and its task group cancelled
            await limiter.lending_ends.wait()
            self._channel.post({"op": "revoke", "endpoint": endpoint})


async def _apply_until_released(limiter: EndpointLimiter, slot: Any, held: _Held) -> None:
    """Steer `limiter` by each attempt made under the permit, until it is given back."""
    first = True
    while True:  # the worker always gives the permit back, or its channel ends
        await held.told.wait()
        held.told = anyio.Event()
        outcomes, held.outcomes = held.outcomes, []
        for report, hint, tokens in outcomes:
            if not first:
                slot = slot.again(tokens)
            first = False
            if hint is not None:
                limiter.learn_limits(RateLimitHint(**hint))
            if report is not None:
                slot.report(
                    status=report["status"],
                    retry_after=report["retry_after"],
                    usage_tokens=report["usage"],
                )
        if held.released:
            return


def _hint_fields(hint: RateLimitHint | None) -> dict[str, Any] | None:
    return None if hint is None else {name: getattr(hint, name) for name in _HINT_FIELDS}


@dataclass
class _Held:
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    told: anyio.Event = field(default_factory=anyio.Event)
    outcomes: list[Outcome] = field(default_factory=list)
    granted: bool = False
    released: bool = False

    def tell(self, outcome: Any) -> None:
        if outcome is not None:
            report, hint, tokens = outcome
            self.outcomes.append((report, hint, int(tokens)))
        self.told.set()
