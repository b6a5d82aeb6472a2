"""`CorralService`: the journal, the run manager and uvicorn, as one long-lived component.

`run(task_status=...)` opens the journal, starts the manager's task group and uvicorn on a bound
socket, reports the base URL, and serves until cancelled. uvicorn is driven through its
`startup`/`shutdown` steps so it installs no signal handlers (the CLI handles those).
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import uvicorn
from anyio.abc import TaskStatus

from agents import open_sqlite_store

from .._single import JOURNAL_NAME
from ._app import build_app
from ._errors import ServiceOptionsError, ServiceStartFailed
from ._runs import RunManager, ServiceLimits

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
GRACEFUL_SHUTDOWN = 1


@dataclass(frozen=True)
class ServiceOptions:
    home: Path
    """`$CORRAL_HOME`: the journal lives there."""
    token: str
    host: str = "127.0.0.1"
    port: int = 8420
    limits: ServiceLimits = field(default_factory=ServiceLimits)
    env: Mapping[str, str] | None = None
    """The environment runs see (model keys, CORRAL_*); the server's own when None."""


class CorralService:
    """Serves the API until cancelled; `await tg.start(service.run)` gives its base URL."""

    def __init__(self, options: ServiceOptions) -> None:
        self.options = options

    async def run(self, *, task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED) -> None:
        options = self.options
        journal = options.home / JOURNAL_NAME
        sock = bind_socket(options.host, options.port)
        try:
            async with (
                open_sqlite_store(journal) as store,
                anyio.create_task_group() as tg,
            ):
                manager = RunManager(store, env=options.env, limits=options.limits)
                await tg.start(manager.run)
                server = _uvicorn_server(manager, options.token)
                await _start(server, sock)
                try:
                    task_status.started(_base_url(options.host, sock.getsockname()[1]))
                    await anyio.sleep_forever()
                finally:
                    tg.cancel_scope.cancel()
                    with anyio.move_on_after(STOP_TIMEOUT, shield=True):
                        await server.shutdown(sockets=[sock])
        finally:
            sock.close()


def bind_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port`, or a clear `ServiceOptionsError` saying why not."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ServiceOptionsError(f"cannot resolve host {host!r}: {exc.strerror}") from exc
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ServiceOptionsError(
                f"port {port} on {host} is in use; choose another with --port"
            ) from exc
        raise ServiceOptionsError(f"cannot listen on {host} port {port}: {exc.strerror}") from exc
    return sock


def _base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _uvicorn_server(manager: RunManager, token: str) -> uvicorn.Server:
    config = uvicorn.Config(
        build_app(manager, token),
        lifespan="off",
        log_level="warning",
        log_config=None,
        access_log=False,
        proxy_headers=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    return server


async def _start(server: uvicorn.Server, sock: socket.socket) -> None:
    try:
        with anyio.fail_after(START_TIMEOUT):
            await server.startup(sockets=[sock])
    except TimeoutError as exc:
        raise ServiceStartFailed(f"the API server did not start within {START_TIMEOUT} s") from exc
    if not server.started:
        raise ServiceStartFailed("the API server did not start; see the log above")
