"""A cap on the request bodies `corral mcp-server --http` reads: the size a stdio line may have.

The SDK reads a POST's whole body before looking at it, however long; a client (one that holds
the token) could make the server hold any amount. A body past `MAX_MESSAGE_BYTES` is refused
with 413 and a JSON-RPC parse error (`id` `null`, as on stdio: nothing of it was read) as soon
as its declared length or its bytes so far pass the cap; one within it is handed on unchanged.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._lines import MAX_MESSAGE_BYTES

TOO_LARGE = (
    f"Parse error: the request body is longer than {MAX_MESSAGE_BYTES // 2**20} MiB and was "
    "not read; send smaller messages"
)


class CappedBody:
    """ASGI middleware: bodies of at most `limit` bytes reach `app`; longer ones get 413."""

    def __init__(self, app: ASGIApp, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._app = app
        self._limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "DELETE"):
            await self._app(scope, receive, send)
            return
        if _declared_length(scope) > self._limit:
            await _refuse(scope, receive, send)
            return
        body = await self._read(receive)
        if body is None:
            await _refuse(scope, receive, send)
            return
        await self._app(scope, _replaying(body, receive), send)

    async def _read(self, receive: Receive) -> list[Message] | None:
        """The body's messages, or None once they pass the cap (a disconnect ends them)."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages
            size += len(message.get("body", b""))
            if size > self._limit:
                return None
            if not message.get("more_body", False):
                return messages


def _declared_length(scope: Scope) -> int:
    for name, value in scope.get("headers", ()):
        if name == b"content-length" and value.isdigit():
            return int(value)
    return 0


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    """`receive` that answers the body read already, then the client's own messages."""
    pending = list(reversed(messages))

    async def replay() -> MutableMapping[str, Any]:
        return pending.pop() if pending else await receive()

    return replay


async def _refuse(scope: Scope, receive: Receive, send: Send) -> None:
    error = {"code": -32700, "message": TOO_LARGE}
    answer = JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=413)
    await answer(scope, receive, send)
