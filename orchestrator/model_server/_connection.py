"""Lets a request handler drop its client's TCP connection, which ASGI itself cannot express.

ASGI servers answer 500 to an app that gives up before responding, so the disconnect fault needs
the transport. This protocol puts the transport's `close` into each request's `scope["state"]`
under `CLOSE_CONNECTION`; everything else is uvicorn's own. It is uvicorn's httptools protocol
(a C parser), not h11's: that costs a fraction of the CPU per request, and in every benchmark
the server shares the cores of the clients it serves.
"""

from __future__ import annotations

import asyncio
from urllib.parse import unquote

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from ._reply import CLOSE_CONNECTION

MAX_HEAD_BYTES = 1 << 20
"""The most a request line and its headers may take together. uvicorn's h11 protocol stops a
head at 16 KiB; httptools keeps every header it is sent, so without this a client could hold
any amount of the server's memory in one request's headers. It is counted a received chunk at a
time (at most 256 KiB each), so a head is refused somewhere between this and one chunk more."""
HEAD_TIMEOUT = 30.0
"""Seconds a client has to send a request's line and headers, counted from when the server
starts waiting for them (the connection opened, or the last answer ended). uvicorn bounds only
the idle wait after an answer, and any byte (a blank line) cancels that: a client trickling a
head, or nothing at all, kept its connection, and the server's file descriptor, for ever."""
_TOO_LARGE = (
    f"the request line and headers passed {MAX_HEAD_BYTES // 1024} KiB; send fewer or shorter "
    "headers"
).encode()


class ClosableHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a connection-closing callable in the request state."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # A copy per connection: uvicorn shares one state dict between all connections.
        self.app_state = {**self.app_state, CLOSE_CONNECTION: transport.close}
        self._in_head = False
        self._head_bytes = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_head()

    def _await_head(self) -> None:
        self._stop_head_timer()
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT, self._head_too_slow)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        # A pipelined request whose head came in full is being answered: it is not waited for.
        answering = self.cycle is not None and not self.cycle.response_complete
        if self._in_head or not answering:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._in_head or self.transport.is_closing():
            return
        self._head_bytes += len(data)
        if self._head_bytes > MAX_HEAD_BYTES:
            self._in_head = False
            self._refuse_head()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_bytes = 0

    def _refuse_head(self) -> None:
        head = (
            STATUS_LINE[431]
            + b"content-type: text/plain; charset=utf-8\r\n"
            + f"content-length: {len(_TOO_LARGE)}\r\n".encode()
            + b"connection: close\r\n\r\n"
        )
        self.transport.write(head + _TOO_LARGE)
        self.transport.close()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._stop_head_timer()
        target = self.url
        super().on_headers_complete()
        if target.startswith(b"http://") or target.startswith(b"https://"):
            # An absolute-form target is a request meant for a proxy. httptools keeps only its
            # path, which would answer it as if it were ours; kept whole (as h11 does) it
            # reaches no endpoint, and its 404 names it. The request's task has not run yet.
            raw_path = target.partition(b"?")[0]
            self.scope["path"] = unquote(raw_path.decode("latin-1"))
            self.scope["raw_path"] = raw_path
