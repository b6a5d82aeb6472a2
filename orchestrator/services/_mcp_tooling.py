"""MCP tools in every agent's tool list: offered directly, or behind `tool_search`, after the
three resource tools (`list_mcp_resources` and the rest), which every agent gets when MCP is on.

Below the threshold (100 tools, as Codex) each agent's registry is attached to the MCP manager
and follows its list as servers come, go and change. At or above it the MCP tools are deferred:
agents get `tool_search`, and what it finds joins their registry for the next turn. The search
index is rebuilt whenever an MCP list changes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.abc import TaskStatus

from corral.agents import CorralConfig
from corral.tools import ToolRegistry

from ._embedding import Embedder
from ._minilm import retrieval_embedder
from .mcp import McpManager, TraceContext, no_trace_context, open_mcp_manager, resource_tools
from .toolsearch import DeferredTool, DeferredTools


class McpTooling:
    """Equips agents' registries with the process's MCP tools."""

    def __init__(
        self, mcp: McpManager, *, threshold: int, embedder: Embedder | None = None
    ) -> None:
        self.mcp = mcp
        self.threshold = threshold
        self._embedder = embedder
        self._deferred: DeferredTools | None = None
        self._resource_tools = resource_tools(mcp)

    @property
    def defers(self) -> bool:
        return self._deferred is not None

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Keep the search index in step with the servers' lists until cancelled."""
        await self._refresh()
        task_status.started()
        while True:
            changed = self.mcp.changed
            await changed.wait()
            await self._refresh()

    async def _refresh(self) -> None:
        offered = self.mcp.offered()
        if len(offered) < self.threshold and self._deferred is None:
            return
        if self._deferred is None:
            self._deferred = DeferredTools(self._embedder or retrieval_embedder())
        await self._deferred.rebuild(DeferredTool(o.tool, o.server, o.raw_name) for o in offered)

    def equip(self, registry: ToolRegistry) -> None:
        """Give one agent's registry the MCP resource tools, then the MCP tools, or
        `tool_search` when they are deferred."""
        for tool in self._resource_tools:
            if tool.name not in registry:
                registry.register(tool)
        if self._deferred is None:
            self.mcp.attach(registry)
        else:
            registry.register(self._deferred.tool_search_tool(registry))


@asynccontextmanager
async def open_mcp_tooling(
    config: CorralConfig, *, trace_context: TraceContext = no_trace_context
) -> AsyncIterator[McpTooling | None]:
    """The MCP servers of `config` started, with their tooling; None when none is configured.

    `trace_context` gives the W3C trace headers of the tool call under way, for each request's
    `_meta`, so the servers' spans join the run's trace.
    """
    if not any(server.enabled for server in config.mcp_servers.values()):
        yield None
        return
    manager = open_mcp_manager(config, trace_context=trace_context)
    async with manager as mcp, anyio.create_task_group() as tg:
        tooling = McpTooling(mcp, threshold=config.tool_search_threshold)
        await tg.start(tooling.run)
        yield tooling
        tg.cancel_scope.cancel()
