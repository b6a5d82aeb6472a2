"""A reply ready to send, and sending it over ASGI: whole, or cut off midway.

Every answer (policy, cassette, upstream, injected fault) is first built as a `Reply`, so faults,
latency and the concurrency gate treat them all alike. A JSON body is one chunk; a stream is one
chunk per SSE frame, which is what lets a disconnect fault stop between two events.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.types import Receive, Scope, Send

from ._json import dumps

CLOSE_CONNECTION = "corral.close_connection"
"""Key in `scope["state"]` of a callable that closes the client's connection (see _connection)."""

DISCONNECT_TIMEOUT = 5.0
_SSE_HEADERS = (("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"))


@dataclass(frozen=True)
class Reply:
    status: int
    chunks: list[bytes]
    headers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def streamed(self) -> bool:
        content_type = dict(self.headers).get("content-type", "")
        return content_type.startswith("text/event-stream")


def json_reply(
    status: int, payload: Any, headers: Sequence[tuple[str, str]] = (), *, plain: bool = False
) -> Reply:
    """`payload` as a JSON body (`plain` as for `_json.dumps`)."""
    body = dumps(payload, plain=plain)
    return Reply(status, [body], [("content-type", "application/json"), *headers])


def error_reply(
    status: int, message: str, kind: str, code: str, headers: Sequence[tuple[str, str]] = ()
) -> Reply:
    """An OpenAI-style error body: `{"error": {"message", "type", "param", "code"}}`."""
    error = {"message": message, "type": kind, "param": None, "code": code}
    return json_reply(status, {"error": error}, headers)


def sse_reply(frames: list[bytes], status: int = 200) -> Reply:
    return Reply(status, frames, list(_SSE_HEADERS))


async def send_reply(send: Send, reply: Reply) -> None:
    """Send the whole reply.

    A stream's frames go out in one body message: they are all ready at once, and a message
    per frame cost a write (a system call) per frame. The client reads the same bytes.
    """
    body = b"".join(reply.chunks)
    extra = [] if reply.streamed else [("content-length", str(len(body)))]
    await _start(send, reply, extra)
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_cut_reply(scope: Scope, receive: Receive, send: Send, reply: Reply) -> None:
    """Send the first half of a streamed reply's frames, then drop the connection.

    A reply that is not a stream sends nothing at all: the client sees the connection close
    without a response.
    """
    if reply.streamed:
        await _start(send, reply)
        for chunk in reply.chunks[: max(1, len(reply.chunks) // 2)]:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await close_connection(scope, receive)


async def close_connection(scope: Scope, receive: Receive) -> None:
    """Close the client's connection and wait until the server has noticed."""
    close: Callable[[], object] | None = scope.get("state", {}).get(CLOSE_CONNECTION)
    if close is None:
        raise RuntimeError("closing a connection needs the server started by serve_model_server")
    close()
    # Returning before the server sees the close would make it log an unfinished response.
    with anyio.fail_after(DISCONNECT_TIMEOUT):
        while (await receive())["type"] != "http.disconnect":
            pass


async def _start(send: Send, reply: Reply, extra: Sequence[tuple[str, str]] = ()) -> None:
    pairs = [*reply.headers, *extra]
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in pairs]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
