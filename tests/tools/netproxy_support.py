"""Shared pieces of the network-policy tests: a loopback HTTP server and a test resolver.

Host names under `.test` resolve to loopback only through `loopback_resolver`, which the proxy
is given in place of the system's: no test sends a packet off this machine.
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc

from corral.tools._domains import IpAddress

DEADLINE = 30.0
BODY = b"hello from the loopback server"


async def loopback_resolver(name: str, port: int) -> Sequence[IpAddress]:
    """Every `.test` name is 127.0.0.1 (a DNS record the test controls); nothing else resolves."""
    return [ipaddress.ip_address("127.0.0.1")] if name.endswith(".test") else []


@dataclass
class LoopbackServer:
    """An HTTP server on 127.0.0.1 that answers `BODY` and records each request head."""

    port: int = 0
    heads: list[bytes] = field(default_factory=list)

    async def handle(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            head = b""
            with anyio.move_on_after(DEADLINE):
                while b"\r\n\r\n" not in head:
                    try:
                        head += await stream.receive()
                    except anyio.EndOfStream:
                        return
            self.heads.append(head)
            reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
            await stream.send(reply % len(BODY) + BODY)


@asynccontextmanager
async def serve_loopback() -> AsyncIterator[LoopbackServer]:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    server = LoopbackServer(port=listener.extra(anyio.abc.SocketAttribute.local_port))
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, server.handle)
        yield server
        group.cancel_scope.cancel()
