"""What both `openai`-SDK adapters share: the SDK client, the attempt, the stream loop, retries.

corral builds and validates its request bodies itself, so they go out through the SDK's low-level
`post` without the request-parameter transform (about half the SDK's CPU per call); events come
back as the plain dicts the SDK's SSE decoder parsed. Subclasses say what to send and how to read.
With an `AttemptGate`, every attempt (retries included) waits for the gate and reports to it.
"""

from __future__ import annotations

import functools
import os
import ssl
from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any, ClassVar, Protocol

import anyio
import httpx2
from openai import (
    APIConnectionError,
    AsyncOpenAI,
    AsyncStream,
    DefaultAsyncHttpxClient,
    OpenAIError,
    RequestOptions,
    Timeout,
)

from ._failures import translate_sdk_error
from ._gate import encode_body, estimate_tokens, run_gated
from ._retry import RetryPolicy, Sleep, TransientFailure, run_with_retries
from ._settings import ModelSettings
from ._types import AttemptGate, EventCallback, ModelRequest, ModelResponse, StreamEvent

CONNECT_TIMEOUT = 15.0
CLOSE_TIMEOUT = 5.0
POOL_SHARDS = 8
"""Connection pools per client, taken in turn. httpx's pool checks every idle connection on
each request (a socket probe each), so one pool of C connections costs O(C) per request; eight
pools of C/8 cut that work by eight for the price of a few more idle sockets."""
_RAW_STREAM = AsyncStream[object]


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


class SdkModelClient(ABC):
    """A `ModelClient` on the `openai` SDK; retries belong to tenacity, not the SDK."""

    path: ClassVar[str]

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
        connect = min(CONNECT_TIMEOUT, settings.request_timeout)
        timeout = Timeout(
            settings.request_timeout, connect=connect, read=settings.stream_idle_timeout
        )
        self._timeout = timeout
        self._pools: list[AsyncOpenAI] = []
        self._turn = 0
        self._stream_options: RequestOptions = {"security": {"bearer_auth": True}}
        self._blocking_options: RequestOptions = {
            "security": {"bearer_auth": True},
            "timeout": Timeout(settings.request_timeout, connect=connect),
        }

    async def complete(
        self, request: ModelRequest, *, on_event: EventCallback | None = None
    ) -> ModelResponse:
        """Send `request`, retrying transient failures; raises a `ModelError` when it cannot."""
        if request.reasoning_effort is None and self.settings.reasoning_effort is not None:
            request = replace(request, reasoning_effort=self.settings.reasoning_effort)
        # Encoded once: the gate's estimate and every attempt use the same bytes.
        body = encode_body(self.build_body(request))
        emit = on_event or _discard
        gate = self._gate
        estimate = estimate_tokens(body) if gate is not None else 0
        attempts = 0

        async def attempt() -> ModelResponse:
            nonlocal attempts
            attempts += 1
            if gate is None:
                return await self._attempt(body, stream=request.stream, emit=emit)
            return await run_gated(
                gate, estimate, lambda: self._attempt(body, stream=request.stream, emit=emit)
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
        for pool in self._pools:
            await pool.close()

    @abstractmethod
    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for `request`, ready to send."""

    @abstractmethod
    def new_reader(self, emit: EventCallback) -> StreamReader:
        """A fresh reader for one streamed attempt."""

    @abstractmethod
    def parse_body(self, data: dict[str, Any], emit: EventCallback) -> ModelResponse:
        """The response from a non-streamed answer."""

    def _next_pool(self) -> AsyncOpenAI:
        """The next pool in turn; made on first use, so a client that sends little makes few."""
        turn, self._turn = self._turn, (self._turn + 1) % POOL_SHARDS
        if turn == len(self._pools):
            settings = self.settings
            assert settings.base_url is not None and settings.api_key is not None
            http = DefaultAsyncHttpxClient(timeout=self._timeout, verify=tls_context())
            self._pools.append(
                AsyncOpenAI(
                    base_url=settings.base_url,
                    api_key=settings.api_key.get_secret_value(),
                    max_retries=0,
                    timeout=self._timeout,
                    http_client=http,
                )
            )
        return self._pools[turn]

    async def _attempt(self, body: bytes, *, stream: bool, emit: EventCallback) -> ModelResponse:
        timeout = self.settings.request_timeout
        try:
            with anyio.fail_after(timeout):
                if stream:
                    return await self._read_stream(body, emit)
                return await self._read_body(body, emit)
        except TimeoutError as exc:
            raise TransientFailure(f"no complete response within {timeout:g} s") from exc
        except OpenAIError as exc:
            raise translate_sdk_error(exc, self.endpoint) from exc

    async def _read_body(self, body: bytes, emit: EventCallback) -> ModelResponse:
        data = await self._next_pool().post(
            self.path, cast_to=object, content=body, options=self._blocking_options
        )
        if not isinstance(data, dict):
            raise TransientFailure(
                f"the endpoint answered with a non-JSON body: {str(data)[:200]!r}"
            )
        return self.parse_body(data, emit)

    async def _read_stream(self, body: bytes, emit: EventCallback) -> ModelResponse:
        stream = await self._next_pool().post(
            self.path,
            cast_to=object,
            content=body,
            options=self._stream_options,
            stream=True,
            stream_cls=_RAW_STREAM,
        )
        reader = self.new_reader(emit)
        try:
            async for event in stream:
                if isinstance(event, dict):
                    reader.feed(event)
        except APIConnectionError:
            # A connection that drops after the provider said "complete" lost nothing.
            if not reader.done:
                raise
        finally:
            with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
                await stream.close()
        return reader.finish()


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's verifying TLS context (the CA bundle, `SSL_CERT_FILE` and `SSL_CERT_DIR`
    as the SDK reads them): loading the bundle costs about 25 ms of CPU, paid once instead of
    once per client, which each run of `corral.run_agents` opens."""
    return httpx2.create_ssl_context()


def _discard(event: StreamEvent) -> None:
    del event
