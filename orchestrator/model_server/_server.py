"""Running the scripted server: binding the port, starting uvicorn on it, and stopping it.

`serve_model_server` is the in-process API the tests and the CLI share; `orchestrator._uvicorn`
binds and serves. No task of ours has to stay alive while it serves, so an error in the
`async with` body surfaces as itself, not wrapped in an exception group.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio

from .._collector import paced_collector
from .._uvicorn import base_url, bind_listening_socket, serving
from ._app import ServerState, build_app
from ._cassette import CassetteRecorder, CassetteReplayer
from ._connection import ClosableHttpToolsProtocol
from ._faults import FaultPlanner
from ._journal import RequestJournal
from ._options import ModelServerOptions, Policy, check_options
from ._throttle import Throttle

GRACEFUL_SHUTDOWN = 2
_DEFAULTS = ModelServerOptions()


class RunningModelServer:
    """A started server: where it listens, what it was asked, and its counters."""

    def __init__(self, host: str, port: int, journal: RequestJournal) -> None:
        self.host = host
        self.port = port
        self.base_url = base_url(host, port) + "/v1"
        self._journal = journal

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The logged records, in arrival order (the live list; do not modify); empty unless
        the options' `keep_requests` is on, as it is by default."""
        return self._journal.records

    def stats(self) -> dict[str, Any]:
        """The same JSON as `GET /stats`."""
        return self._journal.stats()


@asynccontextmanager
async def serve_model_server(
    policy: Policy | None, options: ModelServerOptions = _DEFAULTS
) -> AsyncIterator[RunningModelServer]:
    """Serve `policy` over HTTP until the block exits; raises `InvalidInput` for bad options.

    The garbage collector is paced for many requests in flight meanwhile (`paced_collector`)."""
    check_options(policy, options)
    async with AsyncExitStack() as stack:
        stack.enter_context(paced_collector())
        state = _open_state(policy, options, stack)
        sock = bind_listening_socket(options.host, options.port)
        stack.callback(sock.close)
        app = build_app(state)
        async with serving(
            app,
            sock,
            name="model server",
            graceful_shutdown=GRACEFUL_SHUTDOWN,
            http=ClosableHttpToolsProtocol,
        ):
            yield RunningModelServer(options.host, sock.getsockname()[1], state.journal)


def _open_state(
    policy: Policy | None, options: ModelServerOptions, stack: AsyncExitStack
) -> ServerState:
    journal = RequestJournal(options.log_path, keep=options.keep_requests)
    stack.callback(journal.close)
    limiter = anyio.CapacityLimiter(options.max_concurrency) if options.max_concurrency else None
    faults = FaultPlanner(options.faults, options.seed, options.fault_plan)
    state = ServerState(options, policy, journal, faults, limiter)
    if options.rpm is not None or options.tpm is not None:
        state.throttle = Throttle(options.rpm, options.tpm)
    if options.replay_path is not None:
        state.replayer = CassetteReplayer(options.replay_path)
    if options.record_path is not None and options.upstream is not None:
        state.recorder = CassetteRecorder(options.record_path, options.upstream)
        stack.push_async_callback(state.recorder.aclose)
    return state
