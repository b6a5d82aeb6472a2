"""A raw loopback HTTP endpoint for the hostile model-client cases: it records each request
and answers with whatever bytes a case writes, broken or not, which no real server would."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from corral.agents._items import Message
from corral.agents.model import ModelRequest, ModelSettings, open_model_client

API_KEY = "sk-hostile-endpoint-test-key"
Respond = Callable[[SocketStream], Awaitable[None]]


@dataclass
class RawEndpoint:
    base_url: str
    requests: list[bytes] = field(default_factory=list)


async def _read_request(stream: SocketStream) -> bytes:
    reader = BufferedByteReceiveStream(stream)
    head = await reader.receive_until(b"\r\n\r\n", 1 << 16)
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.receive_exactly(length) if length else b""
    return head + b"\r\n\r\n" + body


@asynccontextmanager
async def raw_endpoint(respond: Respond) -> AsyncIterator[RawEndpoint]:
    """A loopback server that records each request and answers it with `respond`."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    endpoint = RawEndpoint(f"http://127.0.0.1:{port}/v1")

    async def handle(stream: SocketStream) -> None:
        async with stream:
            try:
                endpoint.requests.append(await _read_request(stream))
                await respond(stream)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # the client hung up: what these cases want it to do
            except (anyio.EndOfStream, anyio.IncompleteRead):
                pass

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        yield endpoint
        tg.cancel_scope.cancel()


def head(status: str, *headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status}", *headers, "Connection: close", "", ""]
    return "\r\n".join(lines).encode()


def ask(stream: bool) -> ModelRequest:
    return ModelRequest(
        model="m-test", instructions="", input=[Message(role="user", text="hi")], stream=stream
    )


async def complete_through(base_url: str, *, stream: bool) -> None:
    settings = ModelSettings.resolve(
        model="m-test",
        api="responses",
        base_url=base_url,
        env={},
        api_key=API_KEY,
        max_attempts=1,
    )
    client = open_model_client(settings)
    try:
        await client.complete(ask(stream))
    finally:
        await client.aclose()
