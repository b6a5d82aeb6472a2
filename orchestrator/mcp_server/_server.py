"""corral's MCP server: the SDK's lowlevel `Server` over a run manager, and its lifetime.

`open_mcp_server` opens the journal and a run manager (the HTTP service's, with the same
`[service]` allow-lists), and yields the protocol server whose handlers are thin: tools go to
`_tools.call_tool`, resources to `_resources`, subscriptions to `_subscriptions`. The book of
accepted runs is private to the process and dropped with it: an MCP server lives as long as
its client's session, so runs it leaves unfinished stay in the journal, where `corral resume`
carries them on, rather than being taken up by whichever server starts next.
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

from corral.agents import CorralConfig, open_sqlite_store
from corral.tools import SandboxMode

from .._version import corral_version
from ..runs import JOURNAL_NAME, Executor
from ..service._policy import ServicePolicy
from ..service._runs import RunManager, ServiceLimits
from ..service._submissions import open_submission_book
from ._core import McpRuns
from ._resources import TEMPLATES, list_resources, read_resource
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
        open_sqlite_store(options.home / JOURNAL_NAME) as store,
        anyio.TemporaryDirectory(prefix="corral-mcp-") as book_folder,
        open_submission_book(Path(book_folder)) as book,
        anyio.create_task_group() as tg,
    ):
        manager = RunManager(
            store,
            book,
            env=options.env,
            limits=options.limits,
            executor=options.executor,
            policy=options.policy,
        )
        await tg.start(manager.run)
        subscriptions = Subscriptions()
        try:
            yield build_server(McpRuns(manager, subscriptions, tg))
        finally:
            subscriptions.listen.close()
            tg.cancel_scope.cancel()


def build_server(runs: McpRuns) -> Server[Any]:
    """The lowlevel server whose handlers call `runs`."""
    subscriptions = runs.subscriptions

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool.spec() for tool in TOOLS])

    async def call(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        async def report(progress: float, total: float | None, message: str) -> None:
            await ctx.session.report_progress(progress, total, message)

        return await call_tool(runs, params.name, params.arguments, report)

    async def resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return await list_resources(runs.views)

    async def templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=list(TEMPLATES))

    async def read(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await read_resource(runs.views, params.uri)

    async def subscribe(
        ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        subscriptions.subscribe(params.uri, ctx.session)
        return types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        subscriptions.unsubscribe(params.uri, ctx.session)
        return types.EmptyResult()

    return Server(
        SERVER_NAME,
        version=corral_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call,
        on_list_resources=resources,
        on_list_resource_templates=templates,
        on_read_resource=read,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_subscriptions_listen=subscriptions.listen,
    )


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
