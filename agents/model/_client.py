"""What both model adapters share: the endpoint, the attempt, the stream loop, retries.

corral builds, validates and encodes its request bodies itself and posts the bytes through
`HttpEndpoint` (aiohttp, no SDK request pipeline); events come back as plain dicts, and only the
kinds the reader asks for are decoded. Subclasses say what to send and how to read. With an
`AttemptGate`, every attempt (retries included) waits for the gate and reports to it.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Collection
from dataclasses import replace
from typing import Any, ClassVar, Protocol

import anyio

from ._gate import encode_body, estimate_tokens, run_gated
from ._headers import encode_query
from ._http import HttpEndpoint
from ._retry import RetryPolicy, Sleep, TransientFailure, run_with_retries
from ._settings import ModelSettings
from ._types import AttemptGate, EventCallback, ModelRequest, ModelResponse, StreamEvent

CONNECT_TIMEOUT = 15.0


class StreamReader(Protocol):
    """Folds one attempt's stream events into a response."""

    @property
    def done(self) -> bool:
        """True once the provider has said the response is complete."""
        ...

    def feed(self, event: dict[str, Any]) -> None: ...

    def finish(self) -> ModelResponse:
        """The response; raises `TransientFailure` if the stream ended before completion."""
        ...


class HttpModelClient(ABC):
    """A `ModelClient` over HTTP; retries belong to `run_with_retries`."""

    path: ClassVar[str]
    events_needed: ClassVar[frozenset[str] | None] = None
    """The stream events a turn needs when nobody watches it token by token (None: all)."""

    def __init__(
        self,
        settings: ModelSettings,
        *,
        sleep: Sleep = anyio.sleep,
        gate: AttemptGate | None = None,
    ) -> None:
        if settings.base_url is None or settings.api_key is None:
            settings = settings.with_endpoint(os.environ)
        assert settings.base_url is not None and settings.api_key is not None
        self.settings = settings
        self.endpoint: str = settings.base_url
        self._sleep = sleep
        self._gate = gate
        self._policy = RetryPolicy(
            deadline=settings.retry_deadline,
            backoff_initial=settings.backoff_initial,
            backoff_max=settings.backoff_max,
            max_attempts=settings.max_attempts,
        )
        self._http = HttpEndpoint(
            settings.base_url,
            settings.api_key.get_secret_value(),
            connect_timeout=min(CONNECT_TIMEOUT, settings.request_timeout),
            read_timeout=settings.stream_idle_timeout,
            extra_headers=settings.request_headers(),
            query=encode_query(settings.query_params),
        )

    async def complete(
        self, request: ModelRequest, *, on_event: EventCallback | None = None
    ) -> ModelResponse:
        """Send `request`, retrying transient failures; raises a `ModelError` when it cannot."""
        if request.reasoning_effort is None and self.settings.reasoning_effort is not None:
            request = replace(request, reasoning_effort=self.settings.reasoning_effort)
        # Encoded once: the gate's estimate and every attempt use the same bytes.
        body = encode_body(self.build_body(request))
        emit = on_event or _discard
        # Deltas are decoded only for someone who watches them.
        wanted = self.events_needed if on_event is None else None
        gate = self._gate
        estimate = estimate_tokens(body) if gate is not None else 0
        attempts = 0

        async def attempt() -> ModelResponse:
            nonlocal attempts
            attempts += 1
            if gate is None:
                return await self._attempt(body, request.stream, emit, wanted)
            return await run_gated(
                gate, estimate, lambda: self._attempt(body, request.stream, emit, wanted)
            )

        response = await run_with_retries(
            attempt,
            policy=self._policy,
            endpoint=self.endpoint,
            sleep=self._sleep,
            on_event=on_event,
        )
        return response if attempts == 1 else replace(response, attempts=attempts)

    async def aclose(self) -> None:
        await self._http.aclose()

    @abstractmethod
    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for `request`, ready to send."""

    @abstractmethod
    def new_reader(self, emit: EventCallback) -> StreamReader:
        """A fresh reader for one streamed attempt."""

    @abstractmethod
    def parse_body(self, data: dict[str, Any], emit: EventCallback) -> ModelResponse:
        """The response from a non-streamed answer."""

    async def _attempt(
        self, body: bytes, stream: bool, emit: EventCallback, wanted: Collection[str] | None
    ) -> ModelResponse:
        timeout = self.settings.request_timeout
        # A bare cancel scope, not `fail_after`: the same deadline without its two generator
        # context managers, on every request. Only the deadline cancels this scope, so the
        # line after it is reached only when the deadline passed.
        with anyio.CancelScope(deadline=anyio.current_time() + timeout):
            if stream:
                return await self._read_stream(body, emit, wanted)
            return await self._read_body(body, emit)
        raise TransientFailure(f"no complete response within {timeout:g} s")

    async def _read_body(self, body: bytes, emit: EventCallback) -> ModelResponse:
        data = await self._http.post_json(self.path, body)
        if not isinstance(data, dict):
            raise TransientFailure(
                f"the endpoint answered with a non-JSON body: {str(data)[:200]!r}"
            )
        return self.parse_body(data, emit)

    async def _read_stream(
        self, body: bytes, emit: EventCallback, wanted: Collection[str] | None
    ) -> ModelResponse:
        reader = self.new_reader(emit)
        async with self._http.open_stream(self.path, body, wanted) as events:
            try:
                async for event in events:
                    reader.feed(event)
            except TransientFailure:
                # A connection that drops after the provider said "complete" lost nothing.
                if not reader.done:
                    raise
        return reader.finish()


def _discard(event: StreamEvent) -> None:
    del event
