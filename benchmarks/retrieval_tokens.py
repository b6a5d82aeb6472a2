"""Tokens of tool definitions an agent sends: every MCP tool, or `tool_search` and what it loads.

The 645 tools of ../shared/data/tools become the function specs corral sends (Responses-API
form, parameters as strings with their descriptions: real schemas with types and enums are
larger, so "all tools" is a lower bound). Tokens are Codex's estimate, 4 bytes per token.
Run from the repo root:

    .venv/bin/python -m benchmarks.retrieval_tokens
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from typing import Any

import anyio

from corral.agents import ByteEstimator
from corral.orchestrator.services import retrieval_embedder
from corral.orchestrator.services.mcp import McpArguments
from corral.orchestrator.services.toolsearch import (
    DEFAULT_LIMIT,
    DeferredTool,
    DeferredTools,
    IndexedTool,
    ToolSearchArgs,
    load_catalog,
)
from corral.tools import Tool, ToolContext, ToolOutput, ToolRegistry

from ._retrieval_data import SHARED, TOOL_QUERIES, read_queries


def as_tool(entry: IndexedTool) -> Tool[McpArguments]:
    async def handle(args: McpArguments, ctx: ToolContext) -> ToolOutput:
        del args, ctx
        return ToolOutput("")

    properties = {p: {"type": "string", "description": d} for p, d in entry.parameters.items()}
    return Tool(
        name=entry.name,
        description=entry.description,
        args=McpArguments,
        handler=handle,
        schema={"type": "object", "properties": properties},
    )


def spec_tokens(registry: ToolRegistry) -> int:
    counter = ByteEstimator()
    return sum(counter.count_text(json.dumps(s)) for s in registry.responses_tools())


async def measure(entries: Sequence[IndexedTool], queries: Sequence[str]) -> dict[str, Any]:
    tools = [as_tool(e) for e in entries]
    everything = ToolRegistry(tools)
    deferred = DeferredTools(retrieval_embedder())
    await deferred.rebuild(
        DeferredTool(t, e.server, e.tool) for t, e in zip(tools, entries, strict=True)
    )
    searched, answers = [], []
    for query in queries:
        registry = ToolRegistry()
        search = deferred.tool_search_tool(registry)
        registry.register(search)
        output = await search.handler(ToolSearchArgs(query=query), _no_context())
        answers.append(ByteEstimator().count_text(output.text))
        searched.append(spec_tokens(registry))
    alone = ToolRegistry()
    alone.register(deferred.tool_search_tool(alone))
    return {
        "tools": len(tools),
        "all_tools": spec_tokens(everything),
        "tool_search_only": spec_tokens(alone),
        "after_one_search": statistics.mean(searched),
        "search_answer": statistics.mean(answers),
    }


def _no_context() -> Any:
    # tool_search's handler never reads its context.
    return None


def report(figures: dict[str, Any]) -> str:
    saved = 1 - (figures["after_one_search"] + figures["search_answer"]) / figures["all_tools"]
    return "\n".join(
        [
            f"tool definitions, {figures['tools']} tools (tokens, 4 bytes each):",
            f"- all tools sent: {figures['all_tools']:,}",
            f"- tool search on, before any search: {figures['tool_search_only']:,}",
            f"- after one search (limit {DEFAULT_LIMIT}): {figures['after_one_search']:,.0f} of "
            f"specs + {figures['search_answer']:,.0f} of answer ({saved:.1%} fewer than all tools)",
        ]
    )


def main() -> None:
    entries = load_catalog(SHARED / "tools")
    queries = [q.text for q in read_queries(TOOL_QUERIES, {e.name for e in entries})]
    print(report(anyio.run(measure, entries, queries)))


if __name__ == "__main__":
    main()
