"""`CorralService`: the journal, the run manager and uvicorn, as one long-lived component.

`running_manager` opens the journal and the book of accepted runs and starts a `RunManager` over
them (which first takes up the runs a previous process left unfinished); the MCP server uses it
too. `CorralService.run(task_status=...)` adds uvicorn on a bound socket
(`orchestrator._uvicorn`), reports the base URL, and serves until cancelled.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import TaskStatus

from corral.agents import open_journal
from corral.observability import capture_enabled

from .._uvicorn import base_url, bind_listening_socket, serving
from ..runs import JOURNAL_NAME, Executor
from ._app import build_app
from ._auth import loopback_hosts
from ._entries import ServiceLimits
from ._policy import ServicePolicy
from ._runs import RunManager
from ._submissions import open_submission_book
from ._wakeups import open_wakeups

GRACEFUL_SHUTDOWN = 1


@dataclass(frozen=True)
class ServiceOptions:
    home: Path
    """`$CORRAL_HOME`: the journal lives there, unless `journal` names a shared one."""
    token: str
    journal: str | None = None
    """A shared PostgreSQL journal's URL (`[journal] url`); None: the SQLite file in `home`."""
    host: str = "127.0.0.1"
    port: int = 8420
    limits: ServiceLimits = field(default_factory=ServiceLimits)
    env: Mapping[str, str] | None = None
    """The environment runs see (model keys, CORRAL_*); the server's own when None."""
    executor: Executor | None = None
    """Where runs execute (`corral serve --executor`); in this process when None."""
    policy: ServicePolicy | None = None
    """What requests may ask for (`[service]` allow-lists); read from the server's own config
    in its working folder when None."""


class CorralService:
    """Serves the API until cancelled; `await tg.start(service.run)` gives its base URL."""

    def __init__(self, options: ServiceOptions) -> None:
        self.options = options

    async def run(self, *, task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED) -> None:
        options = self.options
        sock = bind_listening_socket(options.host, options.port)
        try:
            async with running_manager(
                options.home,
                journal=options.journal,
                env=options.env,
                limits=options.limits,
                executor=options.executor,
                policy=options.policy,
            ) as manager:
                port = sock.getsockname()[1]
                hosts = loopback_hosts(options.host, port)
                env = os.environ if options.env is None else options.env
                content = capture_enabled(env)
                app = build_app(manager, options.token, hosts=hosts, content=content)
                async with serving(
                    app, sock, name="API server", graceful_shutdown=GRACEFUL_SHUTDOWN
                ):
                    task_status.started(base_url(options.host, port))
                    await anyio.sleep_forever()
        finally:
            sock.close()


@asynccontextmanager
async def running_manager(
    home: Path,
    *,
    journal: str | None = None,
    book: Path | None = None,
    env: Mapping[str, str] | None = None,
    limits: ServiceLimits,
    executor: Executor | None = None,
    policy: ServicePolicy | None = None,
) -> AsyncIterator[RunManager]:
    """A started `RunManager` over the journal (the shared one `journal` names, else the SQLite
    file in `home`) and the book of accepted runs in `book` (`home` when None); its runs are
    cancelled when the block ends."""
    where = journal or home / JOURNAL_NAME
    async with (
        open_journal(where) as store,
        open_wakeups(where) as wakeups,
        open_submission_book(home if book is None else book) as opened,
        anyio.create_task_group() as tg,
    ):
        manager = RunManager(
            store,
            opened,
            env=env,
            limits=limits,
            executor=executor,
            policy=policy,
            wakeups=wakeups,
        )
        await tg.start(manager.run)
        try:
            yield manager
        finally:
            tg.cancel_scope.cancel()
