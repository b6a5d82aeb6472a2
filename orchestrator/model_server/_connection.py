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

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ._reply import CLOSE_CONNECTION


class ClosableHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a connection-closing callable in the request state."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # A copy per connection: uvicorn shares one state dict between all connections.
        self.app_state = {**self.app_state, CLOSE_CONNECTION: transport.close}

    def on_headers_complete(self) -> None:
        target = self.url
        super().on_headers_complete()
        if target.startswith(b"http://") or target.startswith(b"https://"):
            # An absolute-form target is a request meant for a proxy. httptools keeps only its
            # path, which would answer it as if it were ours; kept whole (as h11 does) it
            # reaches no endpoint, and its 404 names it. The request's task has not run yet.
            raw_path = target.partition(b"?")[0]
            self.scope["path"] = unquote(raw_path.decode("latin-1"))
            self.scope["raw_path"] = raw_path
