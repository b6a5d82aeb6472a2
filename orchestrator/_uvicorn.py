"""Serving an ASGI app with uvicorn inside corral's own task structure.

Both of corral's HTTP servers (the scripted model server and `corral serve`) bind their socket
themselves, so port 0 works and a taken port is a clear error, and drive uvicorn through its
`startup`/`shutdown` steps: uvicorn then installs no signal handlers in the host (the CLI
handles Ctrl-C and SIGTERM) and needs no task of ours to stay alive.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn

from corral.tools import InvalidInput, OperationFailed

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0


class CannotListen(InvalidInput):
    """The host cannot be resolved or its port cannot be bound."""


class PortInUse(CannotListen):
    """The requested port is already bound by another socket."""


class HttpStartFailed(OperationFailed):
    """uvicorn did not start listening within its deadline."""


def bind_listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port`, or a clear `CannotListen` saying why it cannot be."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise CannotListen(
            f"cannot resolve host {host!r} ({exc.strerror}); give an address like 127.0.0.1"
        ) from exc
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            message = f"port {port} on {host} is already in use; choose another with --port"
            raise PortInUse(message) from exc
        raise CannotListen(f"cannot listen on {host} port {port}: {exc.strerror}") from exc
    return sock


def base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


@asynccontextmanager
async def serving(
    app: Any, sock: socket.socket, *, name: str, graceful_shutdown: int, http: Any = "auto"
) -> AsyncIterator[None]:
    """uvicorn serving `app` on the bound `sock` until the block exits (then a bounded stop)."""
    config = uvicorn.Config(
        app,
        http=http,
        lifespan="off",
        log_level="warning",
        log_config=None,
        access_log=False,
        proxy_headers=False,
        timeout_graceful_shutdown=graceful_shutdown,
    )
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    try:
        with anyio.fail_after(START_TIMEOUT):
            await server.startup(sockets=[sock])
    except TimeoutError as exc:
        raise HttpStartFailed(f"the {name} did not start within {START_TIMEOUT:g} s") from exc
    if not server.started:
        raise HttpStartFailed(f"the {name} did not start; see the log above")
    try:
        yield
    finally:
        with anyio.move_on_after(STOP_TIMEOUT, shield=True):
            await server.shutdown(sockets=[sock])
