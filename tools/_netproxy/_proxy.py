"""corral's network proxy: the only way out of a sandbox whose network is restricted by domain.

It serves CONNECT tunnels and plain HTTP requests on a unix socket (bound into the sandbox, where
`_forwarder` relays a loopback port to it) and decides by host name with the profile's
`DomainPolicy`. A host is resolved once, here, and the proxy connects to the very address it
checked; a name matched only by a wildcard may not resolve to a loopback, private or link-local
address (DNS rebinding onto the host's own services): only an entry naming that exact host may.
Refusals answer 403 with a one-line reason and are counted (`denials`).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.abc

from .._domains import DomainPolicy, Host, IpAddress
from ._request import MAX_HEAD_BYTES, ProxyRequest, Refused, parse_request

logger = logging.getLogger("corral.netproxy")

HEAD_TIMEOUT = 10.0
CONNECT_TIMEOUT = 10.0
# Once the command is gone its connections end by themselves; past this they are cut.
DRAIN_TIMEOUT = 2.0
# One command's open connections: past this, new ones are refused (corral's file descriptors
# are not the sandbox's to spend).
MAX_CONNECTIONS = 256
SOCKET_NAME = "proxy.sock"

Resolver = Callable[[str, int], Awaitable[Sequence[IpAddress]]]
"""Host name and port to the addresses to try, in order."""


async def system_resolver(name: str, port: int) -> Sequence[IpAddress]:
    """The host's resolver (`getaddrinfo`), TCP addresses only."""
    try:
        infos = await anyio.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return [ipaddress.ip_address(info[4][0]) for info in infos]


@dataclass
class NetworkProxy:
    """Decides and relays; `denials` lists `host: reason` for every refused attempt."""

    policy: DomainPolicy
    resolver: Resolver = system_resolver
    denials: list[str] = field(default_factory=list)
    _active: int = 0
    _idle: anyio.Event | None = None

    async def wait_idle(self) -> None:
        """Return once no connection is being served."""
        while self._active:
            self._idle = anyio.Event()
            await self._idle.wait()

    async def handle(self, client: anyio.abc.ByteStream) -> None:
        """Serve one client connection; every failure ends in an answer, never an exception."""
        self._active += 1
        try:
            if self._active > MAX_CONNECTIONS:
                async with client:
                    await _answer(client, 503, f"more than {MAX_CONNECTIONS} open connections")
                return
            await self._serve(client)
        finally:
            self._active -= 1
            if not self._active and self._idle is not None:
                self._idle.set()

    async def _serve(self, client: anyio.abc.ByteStream) -> None:
        async with client:
            try:
                request, early = await self._read_request(client)
                upstream = await self._open_upstream(request)
            except Refused as refusal:
                if refusal.status in (400, 403) and not refusal.counted:
                    self.denials.append(f"a malformed request: {refusal}")
                await _answer(client, refusal.status, str(refusal))
                return
            except (anyio.EndOfStream, anyio.BrokenResourceError, TimeoutError, OSError):
                return
            async with upstream:
                await self._relay(client, upstream, request, early)

    async def _read_request(self, client: anyio.abc.ByteStream) -> tuple[ProxyRequest, bytes]:
        head = b""
        with anyio.fail_after(HEAD_TIMEOUT):
            while b"\r\n\r\n" not in head:
                head += await client.receive()
                if len(head) > MAX_HEAD_BYTES:
                    raise Refused(431, "the request head is too large")
        head, _, early = head.partition(b"\r\n\r\n")
        # Bytes sent before the answer (a body, a TLS hello) go to the checked host only.
        return parse_request(head + b"\r\n\r\n"), early

    async def _open_upstream(self, request: ProxyRequest) -> anyio.abc.SocketStream:
        host = request.host
        verdict = self.policy.verdict(host)
        if verdict in ("denied", "not-allowed"):
            raise self._deny(host, _POLICY_REASONS[verdict])
        addresses = [host.ip] if host.ip is not None else await self.resolver(host.name, 0)
        if not addresses:
            raise Refused(502, f"{host.name} does not resolve")
        if verdict != "allowed-exact":
            local = [a for a in addresses if not a.is_global]
            if local:
                raise self._deny(host, f"it resolves to the non-public address {local[0]}")
        return await _connect(addresses, request.port, host)

    def _deny(self, host: Host, reason: str) -> Refused:
        self.denials.append(f"{host.name}: {reason}")
        logger.info("network policy refused %s: %s", host.name, reason)
        refusal = Refused(403, f"corral network policy: {host.name} refused: {reason}")
        refusal.counted = True
        return refusal

    async def _relay(
        self,
        client: anyio.abc.ByteStream,
        upstream: anyio.abc.SocketStream,
        request: ProxyRequest,
        early: bytes,
    ) -> None:
        try:
            if request.tunnel:
                await client.send(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                await upstream.send(request.upstream_head)
            if early:
                await upstream.send(early)
            async with anyio.create_task_group() as group:
                group.start_soon(_pump, client, upstream)
                group.start_soon(_pump, upstream, client)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            return


_POLICY_REASONS = {
    "denied": "it matches denied_domains",
    "not-allowed": "it is not in allowed_domains",
}


async def _connect(addresses: Sequence[IpAddress], port: int, host: Host) -> anyio.abc.SocketStream:
    for address in addresses:
        try:
            with anyio.fail_after(CONNECT_TIMEOUT):
                return await anyio.connect_tcp(str(address), port)
        except (OSError, TimeoutError):
            continue
    raise Refused(502, f"could not connect to {host.name} port {port}")


async def _pump(source: anyio.abc.ByteStream, sink: anyio.abc.ByteStream) -> None:
    try:
        async for chunk in source:
            await sink.send(chunk)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    finally:
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await sink.send_eof()


async def _answer(client: anyio.abc.ByteStream, status: int, message: str) -> None:
    body = (message + "\n").encode()
    reason = {
        400: "Bad Request",
        403: "Forbidden",
        431: "Too Large",
        502: "Bad Gateway",
        503: "Service Unavailable",
    }
    head = (
        f"HTTP/1.1 {status} {reason.get(status, 'Refused')}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await client.send(head.encode() + body)


@asynccontextmanager
async def serve_proxy(proxy: NetworkProxy) -> AsyncIterator[Path]:
    """Serve `proxy` on a unix socket in a private folder; yields the folder."""
    folder = Path(tempfile.mkdtemp(prefix="corral-netproxy-"))
    try:
        os.chmod(folder, 0o711)
        path = folder / SOCKET_NAME
        async with await anyio.create_unix_listener(path) as listener:
            os.chmod(path, 0o666)  # the sandbox may run as another user
            async with anyio.create_task_group() as group:
                group.start_soon(listener.serve, _contained(proxy), group)
                yield folder
                # Cancelling a receive on a unix socket that just became readable trips anyio
                # (a set_result on a cancelled future): let finished clients' relays end first.
                with anyio.move_on_after(DRAIN_TIMEOUT, shield=True):
                    await proxy.wait_idle()
                group.cancel_scope.cancel()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _contained(proxy: NetworkProxy) -> Callable[[anyio.abc.SocketStream], Awaitable[None]]:
    async def handle(client: anyio.abc.SocketStream) -> None:
        try:
            await proxy.handle(client)
        except Exception:  # the one boundary: a client can never stop the proxy
            logger.exception("the network proxy failed on one connection")

    return handle
