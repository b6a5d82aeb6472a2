"""corral's MCP server: the SDK's lowlevel `Server` over a run manager, and its lifetime.

`open_mcp_server` opens the journal and a run manager (the HTTP service's `running_manager`,
with the same `[service]` allow-lists), and yields the protocol server whose handlers are thin:
tools go to `_tools.call_tool`, resources to `_resources`, subscriptions to `_subscriptions`.
The book of accepted runs is private to the process and dropped with it: an MCP server lives as
long as its client's session, so runs it leaves unfinished stay in the journal, where
`corral resume` carries them on, rather than being taken up by whichever server starts next.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext

from corral.agents import CorralConfig
from corral.tools import SandboxMode

from .._version import corral_version
from ..runs import Executor
from ..service import ServiceLimits, ServicePolicy, running_manager
from ._core import McpRuns
from ._resources import TEMPLATES, list_resources, parse_uri, read_resource
from ._subscriptions import Subscriptions
from ._tools import TOOLS, call_tool

SERVER_NAME = "corral"
INSTRUCTIONS = (
    "corral runs wide, budgeted, journaled agent jobs: corral_fanout (one worker per item), "
    "corral_review, corral_triage and corral_exec start a run and answer with its id at once. "
    "Follow it with corral_status (wait_seconds waits, with progress notifications), read "
    "results with corral_results (paged) or the resources corral://runs/{id}/results and "
    "corral://runs/{id}/report."
)


@dataclass(frozen=True)
class McpServerOptions:
    home: Path
    """`$CORRAL_HOME`: the journal lives there, shared with every other corral command."""
    journal: str | None = None
    """A shared PostgreSQL journal's URL (`[journal] url`); None: the SQLite file in `home`."""
    limits: ServiceLimits = field(default_factory=ServiceLimits)
    env: Mapping[str, str] | None = None
    """The environment runs see (model keys, CORRAL_*); the server's own when None."""
    executor: Executor | None = None
    policy: ServicePolicy | None = None
    """What calls may ask for; the server's own config's in its working folder when None."""


@asynccontextmanager
async def open_mcp_server(options: McpServerOptions) -> AsyncIterator[Server[Any]]:
    """The protocol server, with its journal and run manager running until the block ends."""
    async with (
        anyio.TemporaryDirectory(prefix="corral-mcp-") as book_folder,
        running_manager(
            options.home,
            journal=options.journal,
            book=Path(book_folder),
            env=options.env,
            limits=options.limits,
            executor=options.executor,
            policy=options.policy,
        ) as manager,
        anyio.create_task_group() as tg,
    ):
        subscriptions = Subscriptions()
        try:
            yield build_server(McpRuns(manager, subscriptions, tg))
        finally:
            subscriptions.listen.close()
            tg.cancel_scope.cancel()


def build_server(runs: McpRuns) -> Server[Any]:
    """The lowlevel server whose handlers call `runs`."""
    handlers = _Handlers(runs)
    return Server(
        SERVER_NAME,
        version=corral_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_templates,
        on_read_resource=handlers.read_resource,
        on_subscribe_resource=handlers.subscribe,
        on_unsubscribe_resource=handlers.unsubscribe,
        on_subscriptions_listen=runs.subscriptions.listen,
    )


Context = ServerRequestContext[Any]
Page = types.PaginatedRequestParams | None


class _Handlers:
    """The protocol's requests, each handed on to `McpRuns` or the resource views."""

    def __init__(self, runs: McpRuns) -> None:
        self._runs = runs

    async def list_tools(self, ctx: Context, params: Page) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool.spec() for tool in TOOLS])

    async def call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        async def report(progress: float, total: float | None, message: str) -> None:
            await ctx.session.report_progress(progress, total, message)  # no token: no-op

        return await call_tool(self._runs, params.name, params.arguments, report)

    async def list_resources(self, ctx: Context, params: Page) -> types.ListResourcesResult:
        return await list_resources(self._runs.views)

    async def list_templates(self, ctx: Context, params: Page) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=list(TEMPLATES))

    async def read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await read_resource(self._runs.views, params.uri)

    async def subscribe(
        self, ctx: Context, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        parse_uri(params.uri)  # only corral's run URIs can be subscribed to
        self._runs.subscriptions.subscribe(params.uri, ctx.session)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._runs.subscriptions.unsubscribe(params.uri, ctx.session)
        return types.EmptyResult()


_WIDTH = (SandboxMode.READ_ONLY, SandboxMode.WORKSPACE_WRITE, SandboxMode.FULL_ACCESS)


def server_policy(config: CorralConfig, workdir: Path) -> ServicePolicy:
    """What MCP calls may ask of a server started in `workdir` with `config`: the `[service]`
    allow-lists, and never a sandbox or network wider than the server's own profile, since
    an MCP client acts for whoever started the server."""
    policy = ServicePolicy.from_config(config, workdir)
    own = SandboxMode(config.sandbox_mode)
    widest = min(policy.max_sandbox, own, key=_WIDTH.index)
    return replace(
        policy, max_sandbox=widest, allow_network=policy.allow_network and config.network_access
    )
