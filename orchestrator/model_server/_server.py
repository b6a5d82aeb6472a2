"""Running the scripted server: binding the port, starting uvicorn on it, and stopping it.

`serve_model_server` is the in-process API the tests and the CLI share. uvicorn is driven through
its `startup`/`shutdown` steps rather than `serve()`: it installs no signal handlers in the host
(the CLI handles Ctrl-C itself), and since its listening server runs on the event loop by itself,
no task of ours has to stay alive, so an error in the `async with` body surfaces as itself.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import uvicorn

from ._app import ServerState, build_app
from ._cassette import CassetteRecorder, CassetteReplayer
from ._connection import ClosableH11Protocol
from ._errors import PortInUse, ServerOptionsError, ServerStartFailed
from ._faults import FaultPlanner
from ._journal import RequestJournal
from ._options import ModelServerOptions, Policy, check_options

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
GRACEFUL_SHUTDOWN = 2
_DEFAULTS = ModelServerOptions()


class RunningModelServer:
    """A started server: where it listens, what it was asked, and its counters."""

    def __init__(self, host: str, port: int, journal: RequestJournal) -> None:
        self.host = host
        self.port = port
        shown = f"[{host}]" if ":" in host else host
        self.base_url = f"http://{shown}:{port}/v1"
        self._journal = journal

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The logged records, in arrival order (the live list; do not modify)."""
        return self._journal.records

    def stats(self) -> dict[str, Any]:
        """The same JSON as `GET /stats`."""
        return self._journal.stats()


@asynccontextmanager
async def serve_model_server(
    policy: Policy | None, options: ModelServerOptions = _DEFAULTS
) -> AsyncIterator[RunningModelServer]:
    """Serve `policy` over HTTP until the block exits; raises `InvalidInput` for bad options."""
    check_options(policy, options)
    async with AsyncExitStack() as stack:
        state = _open_state(policy, options, stack)
        sock = bind_listening_socket(options.host, options.port)
        stack.callback(sock.close)
        server = _uvicorn_server(state)
        await _start_uvicorn(server, sock)
        try:
            yield RunningModelServer(options.host, sock.getsockname()[1], state.journal)
        finally:
            with anyio.move_on_after(STOP_TIMEOUT, shield=True):
                await server.shutdown(sockets=[sock])


def _open_state(
    policy: Policy | None, options: ModelServerOptions, stack: AsyncExitStack
) -> ServerState:
    journal = RequestJournal(options.log_path)
    stack.callback(journal.close)
    limiter = anyio.CapacityLimiter(options.max_concurrency) if options.max_concurrency else None
    faults = FaultPlanner(options.faults, options.seed, options.fault_plan)
    state = ServerState(options, policy, journal, faults, limiter)
    if options.replay_path is not None:
        state.replayer = CassetteReplayer(options.replay_path)
    if options.record_path is not None and options.upstream is not None:
        state.recorder = CassetteRecorder(options.record_path, options.upstream)
        stack.push_async_callback(state.recorder.aclose)
    return state


def bind_listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port`, or a clear `InvalidInput` saying why it cannot be."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ServerOptionsError(
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
        raise ServerOptionsError(f"cannot listen on {host} port {port}: {exc.strerror}") from exc
    return sock


def _uvicorn_server(state: ServerState) -> uvicorn.Server:
    config = uvicorn.Config(
        build_app(state),
        http=ClosableH11Protocol,
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


async def _start_uvicorn(server: uvicorn.Server, sock: socket.socket) -> None:
    try:
        with anyio.fail_after(START_TIMEOUT):
            await server.startup(sockets=[sock])
    except TimeoutError as exc:
        raise ServerStartFailed(f"the model server did not start within {START_TIMEOUT} s") from exc
    if not server.started:
        raise ServerStartFailed("the model server did not start; see the log above")
