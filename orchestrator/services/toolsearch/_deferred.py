"""Deferred MCP tools: when there are many, agents find them with `tool_search` instead.

Codex's policy: at or above a threshold of MCP tools (100) none is sent to the model; each
agent gets `tool_search`, which ranks them and appends the found ones to that agent's registry,
so they are callable from its next turn and the request prefix stays as it was. `DeferredTools`
holds the current tools and their index, and swaps in a new snapshot when MCP lists change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from corral.tools import Tool, ToolContext, ToolOutput, ToolRegistry

from .._embedding import Embedder
from ._errors import EmptyQuery
from ._index import DEFAULT_LIMIT, Hit, IndexedTool, ToolIndex
from ._text import one_line

DEFAULT_DEFER_THRESHOLD = 100
MAX_SEARCH_LIMIT = 32
TOOL_SEARCH_NAME = "tool_search"


@dataclass(frozen=True)
class ToolExposure:
    """How MCP tools reach the model: `direct` ones are sent as they are, `deferred` ones are
    found through `tool_search`. One of the two is always empty."""

    direct: tuple[Tool[Any], ...]
    deferred: tuple[Tool[Any], ...]

    @property
    def defers(self) -> bool:
        return bool(self.deferred)


def visible_tools(
    all_mcp_tools: Sequence[Tool[Any]], threshold: int = DEFAULT_DEFER_THRESHOLD
) -> ToolExposure:
    """Send every MCP tool directly below `threshold`, none at or above it (0: always defer)."""
    tools = tuple(all_mcp_tools)
    if tools and len(tools) >= threshold:
        return ToolExposure(direct=(), deferred=tools)
    return ToolExposure(direct=tools, deferred=())


@dataclass(frozen=True)
class DeferredTool:
    """An MCP tool as corral exposes it, with the server and the server's own name for it."""

    tool: Tool[Any]
    server: str
    raw_name: str

    def indexed(self) -> IndexedTool:
        return indexed_tool(self.tool, server=self.server, raw_name=self.raw_name)


def indexed_tool(tool: Tool[Any], *, server: str, raw_name: str) -> IndexedTool:
    """What the index needs of a corral `Tool`: names, description, argument descriptions."""
    properties = tool.parameters_schema().get("properties")
    parameters = {
        str(name): str(spec.get("description", "")) if isinstance(spec, Mapping) else ""
        for name, spec in (properties.items() if isinstance(properties, Mapping) else ())
    }
    return IndexedTool(tool.name, server, raw_name, tool.description, parameters)


@dataclass(frozen=True)
class _Snapshot:
    index: ToolIndex
    tools: Mapping[str, Tool[Any]]


class ToolSearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        description="What you want to do, in a few words, e.g. 'create a pull request'."
    )
    limit: int = Field(
        default=DEFAULT_LIMIT,
        ge=1,
        le=MAX_SEARCH_LIMIT,
        description=f"How many tools to return (default {DEFAULT_LIMIT}).",
    )


class DeferredTools:
    """The deferred MCP tools by exposed name, their index, and `tool_search` over them.

    The snapshot (index and tools) is immutable and replaced whole by `rebuild`, so a search
    never sees half of an update; a rebuild that finishes after a newer one is dropped.
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._snapshot = _Snapshot(ToolIndex((), embedder), {})
        self._started = 0
        self._installed = 0

    @property
    def index(self) -> ToolIndex:
        return self._snapshot.index

    def get(self, name: str) -> Tool[Any] | None:
        return self._snapshot.tools.get(name)

    async def rebuild(self, tools: Iterable[DeferredTool]) -> None:
        """Index `tools` in a worker thread and make them the ones `tool_search` finds."""
        self._started += 1
        ticket = self._started
        entries = tuple(tools)
        index = await ToolIndex.build_in_thread([e.indexed() for e in entries], self._embedder)
        if ticket > self._installed:
            self._installed = ticket
            self._snapshot = _Snapshot(index, {e.tool.name: e.tool for e in entries})

    async def search(self, query: str, limit: int = DEFAULT_LIMIT) -> list[Hit]:
        return await self._snapshot.index.search_in_thread(query, limit)

    def tool_search_tool(self, registry: ToolRegistry) -> Tool[ToolSearchArgs]:
        """`tool_search` for the agent that owns `registry`: found tools are appended to it."""

        async def handle(args: ToolSearchArgs, ctx: ToolContext) -> ToolOutput:
            del ctx
            return await self._search_and_load(args, registry)

        return Tool(
            name=TOOL_SEARCH_NAME,
            description=self._description(),
            args=ToolSearchArgs,
            handler=handle,
            mutating=False,
            parallel=True,
            side_effects=False,
        )

    async def _search_and_load(self, args: ToolSearchArgs, registry: ToolRegistry) -> ToolOutput:
        snapshot = self._snapshot
        try:
            hits = await snapshot.index.search_in_thread(args.query, args.limit)
        except EmptyQuery as exc:
            return ToolOutput.error(str(exc))
        # No await from here on: checking and registering cannot interleave with another call.
        loaded = []
        for hit in hits:
            tool = snapshot.tools.get(hit.name)
            if tool is not None and hit.name not in registry:
                registry.register(tool)
                loaded.append(hit.name)
        return ToolOutput(format_results(args.query, hits, snapshot.index, loaded))

    def _description(self) -> str:
        servers = Counter(t.server for t in self._snapshot.index.tools)
        sources = "\n".join(
            f"- {name}: {count} tool{'s' if count > 1 else ''}"
            for name, count in sorted(servers.items())
        )
        return (
            "# Tool discovery\n"
            "Finds MCP tools that are not loaded yet: keyword (BM25) and semantic search over "
            "their names, descriptions and parameters. The tools found are loaded and can be "
            "called from your next turn. Search whenever you need a capability none of your "
            "tools has; describe the action in a few words.\n"
            f"Sources:\n{sources or '- none yet'}"
        )


def format_results(query: str, hits: Sequence[Hit], index: ToolIndex, loaded: Sequence[str]) -> str:
    """The answer the model reads: one line per tool, best first."""
    if not hits:
        return f"No tools match {query!r}; try other words."
    lines = [f"{len(hits)} tools for {query!r}, best first (new ones are callable next turn):"]
    for rank, hit in enumerate(hits, start=1):
        entry = index.get(hit.name)
        summary = one_line(entry.description if entry else "")
        state = " [loaded now]" if hit.name in loaded else ""
        lines.append(f"{rank}. {hit.name} ({hit.server}, score {hit.score:.4f}){state}: {summary}")
    return "\n".join(lines)
