"""A cap on each message corral reads back over HTTP from a peer it does not run: a remote MCP
server, a corral service's event stream. Without it, a body (or one server-sent event) that
never ends grows corral without bound.

`cap_messages` makes an `httpx2.AsyncClient` refuse a response body past the cap, or, on an
event stream, one event past it (bytes between two blank lines), as the bytes arrive; it asks
for uncompressed bodies and refuses a compressed one, whose size on the wire says nothing of
its size read. The refusal is a `RemoteProtocolError`, which callers already report as a
failed connection. The cap is corral's one message cap (64 MiB, as for stdio MCP servers).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx2

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The longest body, or server-sent event, corral reads from a peer."""
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")
_CARRY = 3
"""Bytes of the previous chunk kept to find an event's end split across two chunks."""


class MessageTooLong(httpx2.RemoteProtocolError):
    """A peer sent a body or an event past the cap; the rest of it is not read."""


def cap_messages(client: httpx2.AsyncClient, source: str, limit: int = MAX_MESSAGE_BYTES) -> None:
    """Make `client` read no message from `source` (its name, for errors) past `limit` bytes."""
    client.headers["Accept-Encoding"] = "identity"

    async def capped(response: httpx2.Response) -> None:
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise MessageTooLong(
                f"{source} answered compressed ({encoding}) though asked not to; "
                "corral reads only uncompressed answers, whose size it can bound",
                request=response.request,
            )
        inner = response.stream
        assert isinstance(inner, httpx2.AsyncByteStream), "an async client's responses are"
        events = response.headers.get("content-type", "").startswith("text/event-stream")
        response.stream = CappedStream(inner, limit, events=events, source=source)

    client.event_hooks["response"] = [*client.event_hooks["response"], capped]


class CappedStream(httpx2.AsyncByteStream):
    """`inner`'s bytes, failing once a body (or, with `events`, one event) passes `limit`."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, limit: int, *, events: bool, source: str
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._events = events
        self._source = source

    async def __aiter__(self) -> AsyncIterator[bytes]:
        run, tail = 0, b""
        async for chunk in self._inner:
            run, tail = self._count(run, tail, chunk)
            yield chunk

    def _count(self, run: int, tail: bytes, chunk: bytes) -> tuple[int, bytes]:
        """Bytes of the message under way after `chunk`, and the tail to carry on."""
        if self._events:
            window = tail + chunk
            ends = [m.end() for m in _EVENT_END.finditer(window)]
            run = len(window) - ends[-1] if ends else run + len(chunk)
            tail = window[-_CARRY:]
        else:
            run += len(chunk)
        if run > self._limit:
            what = "an event" if self._events else "a body"
            raise MessageTooLong(
                f"{self._source} sent {what} longer than {self._limit // 2**20} MiB; "
                "it was not read"
            )
        return run, tail

    async def aclose(self) -> None:
        await self._inner.aclose()
