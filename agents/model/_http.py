"""The HTTP path to a model endpoint: one aiohttp session per client, server-sent events read
by hand.

corral builds and encodes its request bodies itself and reads only a few kinds of stream event,
so the `openai` SDK's request pipeline (option merging, the httpx request and pool, the SSE
decoder) is work a turn need not pay for: this module posts the bytes and splits the event
stream itself, and decodes an event's JSON only when its reader wants that kind. Failures come
out as `_failures` sorts them (`TransientFailure` or a `ModelError`); the session is made on first
use, inside the event loop, and honours `HTTP(S)_PROXY`/`NO_PROXY` like the SDK's client did,
read once when the session is made (as httpx reads them when its client is made).
"""

from __future__ import annotations

import functools
import io
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Collection, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import Any

import aiohttp
import anyio.to_thread
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

from .._json import loads
from ._errors import ModelError
from ._failures import connection_failure, failure_from_status
from ._retry import TransientFailure
from ._sse import EventSplitter

LARGE_BODY = 1 << 20
"""Bodies past this many bytes go to aiohttp as a stream it writes in chunks (a long
conversation, a big tool output), not as one buffer: aiohttp warns that a single large write can
hold up the event loop."""

_MAX_ERROR_BODY = 64 * 1024
"""What is read of a refused request's body: enough for any error object."""
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
"""The most one attempt reads of an answer, after decompression (a body, or a stream's events
taken together): an endpoint that never stops sending (endless deltas, keep-alive lines, a gzip
bomb) fails the attempt instead of growing the process without bound."""
_CHUNK = 64 * 1024


class HttpEndpoint:
    """POSTs JSON bodies to one base URL with a bearer key; closed with `aclose()`."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        connect_timeout: float,
        read_timeout: float,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        extra_headers: Mapping[str, str] | None = None,
        query: str = "",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_response_bytes = max_response_bytes
        # The provider's headers and query (`ModelSettings`, checked there) go first, so corral's
        # own headers win; the query stays out of `base_url`, which errors and limits name.
        self._query = query
        self._headers = {
            **(extra_headers or {}),
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self._stream_headers = {**self._headers, "Accept": "text/event-stream"}
        self._timeout = aiohttp.ClientTimeout(sock_connect=connect_timeout, sock_read=read_timeout)
        self._session: aiohttp.ClientSession | None = None
        self._proxy: URL | None = None
        self._proxy_auth: aiohttp.BasicAuth | None = None

    async def post_json(self, path: str, body: bytes) -> object:
        """The decoded JSON answer to `body`; raises a sorted failure for anything else."""
        async with self._post(path, body, self._headers) as response:
            data = bytearray()
            async for chunk in _chunks(response.content, self.max_response_bytes):
                data += chunk
        try:
            decoded: object = loads(data)
        except ValueError:
            raise TransientFailure(
                f"the endpoint answered with a non-JSON body: {data[:200]!r}"
            ) from None
        return decoded

    @asynccontextmanager
    async def open_stream(
        self, path: str, body: bytes, wanted: Collection[str] | None
    ) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """The stream of events answering `body`, decoded only where `wanted` names the SSE
        event's name (None: every event); the connection is released when the block exits."""
        async with (
            self._post(path, body, self._stream_headers) as response,
            aclosing(self._events(response.content, wanted)) as events,
        ):
            yield events

    async def _events(
        self, content: aiohttp.StreamReader, wanted: Collection[str] | None
    ) -> AsyncGenerator[dict[str, Any]]:
        """The stream's decoded events, in order, until the body ends or sends `[DONE]`."""
        splitter = EventSplitter(wanted, self.base_url)
        async with aclosing(_chunks(content, self.max_response_bytes)) as chunks:
            async for chunk in chunks:
                for event in splitter.feed(chunk):
                    yield event
                if splitter.ended:
                    return
        for event in splitter.close():
            yield event

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    @asynccontextmanager
    async def _post(
        self, path: str, body: bytes, headers: dict[str, str]
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        session = self._session or await self._open_session()
        try:
            data = body if len(body) <= LARGE_BODY else io.BytesIO(body)
            # Redirects are not followed: a 307 or 308 would carry the conversation (and, to the
            # same origin by another path, the key) wherever the endpoint points.
            async with session.post(
                self.base_url + path + self._query,
                data=data,
                headers=headers,
                proxy=self._proxy,
                proxy_auth=self._proxy_auth,
                allow_redirects=False,
            ) as response:
                if response.status >= 300:
                    raise await _refusal(response, self.base_url)
                yield response
        except aiohttp.ClientError as exc:
            raise connection_failure(exc) from exc

    async def _open_session(self) -> aiohttp.ClientSession:
        # Made here, not in __init__: an aiohttp session belongs to the running event loop.
        # The proxy is looked up once, not by aiohttp's `trust_env` on every request: that cost
        # two worker-thread hops per request (the proxy variables and ~/.netrc, whose entry for
        # the model's host would even clash with the bearer key and fail every request).
        proxy = await anyio.to_thread.run_sync(_env_proxy, self.base_url)
        if self._session is not None:  # another request opened it meanwhile
            return self._session
        self._proxy, self._proxy_auth = proxy
        # A plain-HTTP endpoint (a local server) never needs the CA bundle, nor its loading.
        verify = tls_context() if self.base_url.startswith("https:") else True
        connector = aiohttp.TCPConnector(ssl=verify, limit=0)
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=self._timeout,
            trust_env=False,
            auto_decompress=True,
            skip_auto_headers=("User-Agent",),
            headers={"User-Agent": "corral"},
        )
        return self._session


def _env_proxy(base_url: str) -> tuple[URL | None, aiohttp.BasicAuth | None]:
    """The proxy `HTTP(S)_PROXY` names for `base_url` (None where `NO_PROXY` exempts it or no
    proxy is set), with the credentials in its URL or ~/.netrc."""
    try:
        return get_env_proxy_for_url(URL(base_url))
    except LookupError:
        return None, None


async def _refusal(
    response: aiohttp.ClientResponse, endpoint: str
) -> TransientFailure | ModelError:
    """The failure a non-2xx answer means, from its status, headers and error object."""
    try:
        raw = await response.content.read(_MAX_ERROR_BODY)
    except aiohttp.ClientError:
        raw = b""
    text = raw.decode("utf-8", "replace")
    try:
        body: object = loads(text)
    except ValueError:
        body = text
    if isinstance(body, dict):
        body = body.get("error", body)
    return failure_from_status(
        response.status, response.headers, body, response.reason or "", endpoint
    )


async def _chunks(content: aiohttp.StreamReader, limit: int) -> AsyncGenerator[bytes]:
    """The body's chunks as they arrive, until it ends; past `limit` bytes in all, the attempt
    fails."""
    seen = 0
    chunks = content.iter_chunked(_CHUNK)
    while True:
        try:
            chunk = await anext(chunks)
        except StopAsyncIteration:
            return
        except aiohttp.ClientError as exc:
            raise connection_failure(exc) from exc
        seen += len(chunk)
        if seen > limit:
            raise TransientFailure(
                f"the endpoint's answer passed {limit // 2**20} MiB without ending; "
                "nothing more of it was read"
            )
        yield chunk


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's verifying TLS context (the CA bundle, `SSL_CERT_FILE` and `SSL_CERT_DIR`
    as the `openai` SDK reads them): loading the bundle costs about 25 ms of CPU, paid once
    instead of once per client, which each run of `corral.run_agents` opens."""
    import httpx2  # only for its context recipe, once per process

    return httpx2.create_ssl_context()
