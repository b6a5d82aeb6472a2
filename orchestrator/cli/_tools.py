"""`corral tools search QUERY`: rank MCP tools for a query, as an agent's `tool_search` does.

Tools come from `--catalog DIR` (catalog JSON files) or from the configured MCP servers; the
ranking itself is `orchestrator.services.toolsearch`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import positive_int

if TYPE_CHECKING:
    from corral.agents import CorralConfig

    from ..services.retrieval import Explanation
    from ..services.toolsearch import Hit, IndexedTool, ToolExplanation, ToolIndex


DEFAULT_LIMIT = 8
"""`corral.orchestrator.services.toolsearch.DEFAULT_LIMIT`, spelled out for a fast `--help`."""


def add_parser(sub: Any) -> None:
    tools = sub.add_parser("tools", help="inspect the tools agents can use")
    commands = tools.add_subparsers(dest="tools_command", metavar="SUBCOMMAND", required=True)
    search = commands.add_parser(
        "search", help="rank MCP tools for a query with BM25 and embeddings, as tool_search does"
    )
    search.add_argument("query", metavar="QUERY", help="what you want to do, in a few words")
    search.add_argument(
        "--limit", type=positive_int, default=DEFAULT_LIMIT, help="how many tools (default 8)"
    )
    search.add_argument("--json", action="store_true", help="print a JSON array, best first")
    search.add_argument(
        "--explain",
        action="store_true",
        help="show why each tool ranked: each ranker's rank and each field's BM25 score",
    )
    search.add_argument(
        "--catalog",
        type=Path,
        metavar="DIR",
        help="a folder of tool catalog JSON files to search instead of the configured servers",
    )
    search.set_defaults(handler=search_tools)


async def search_tools(args: argparse.Namespace) -> int:
    import anyio.to_thread

    from corral.agents import load_config

    from ..services import retrieval_embedder
    from ..services.toolsearch import EmptyQuery, ToolIndex, load_catalog

    if not args.query.strip():
        raise EmptyQuery()
    if args.catalog is not None:
        index_tools = await anyio.to_thread.run_sync(load_catalog, args.catalog)
    else:
        index_tools = await live_tools(load_config(cwd=Path.cwd()).config)
    index = await ToolIndex.build_in_thread(index_tools, retrieval_embedder())
    if args.explain:
        explained = await anyio.to_thread.run_sync(index.explain, args.query, args.limit)
        print(_explained_json(explained) if args.json else format_explained(explained, index))
        return 0
    hits = await index.search_in_thread(args.query, args.limit)
    print(json.dumps([_hit_json(h) for h in hits]) if args.json else format_hits(hits, index))
    return 0


async def live_tools(config: CorralConfig) -> list[IndexedTool]:
    from ..services.mcp import open_mcp_manager
    from ..services.toolsearch import NoToolsToSearch, indexed_tool

    """The tools of the configured MCP servers: the seam where the MCP manager plugs in."""
    servers = sorted(name for name, server in config.mcp_servers.items() if server.enabled)
    if not servers:
        raise NoToolsToSearch(
            "no MCP servers are configured and no --catalog was given; add [mcp_servers.NAME] "
            "to config.toml or pass --catalog DIR (a folder of tool catalog JSON files)"
        )
    async with open_mcp_manager(config) as mcp:
        offered = mcp.offered()
    if not offered:
        raise NoToolsToSearch(
            f"the configured MCP servers ({', '.join(servers)}) offer no tools; "
            "`corral mcp list` shows their state"
        )
    return [indexed_tool(o.tool, server=o.server, raw_name=o.raw_name) for o in offered]


def format_hits(hits: list[Hit], index: ToolIndex, reasons: Sequence[Explanation] = ()) -> str:
    """The ranked tools, two lines or more each; what an MCP server wrote (its tools'
    descriptions, its name) is spelled out where a terminal would act on it."""
    from ..services.toolsearch import one_line
    from ._approval import shown_lines
    from ._retrieval_explain import explanation_lines

    if not hits:
        return "no tools to search"
    width = max(len(h.name) for h in hits)
    lines = []
    for rank, hit in enumerate(hits, start=1):
        entry = index.get(hit.name)
        lines.append(f"{rank:>2}. {hit.name:<{width}}  {hit.score:.4f}  {hit.server}")
        lines.append(f"    {one_line(entry.description if entry else '')}")
        if rank <= len(reasons):
            lines.extend(f"    {line}" for line in explanation_lines(reasons[rank - 1]))
    return shown_lines("\n".join(lines))


def format_explained(explained: list[ToolExplanation], index: ToolIndex) -> str:
    from ._retrieval_explain import query_lines

    if not explained:
        return "no tools to search"
    from ._approval import shown_lines

    lines = [
        shown_lines(line) for line in query_lines(explained[0].query, explained[0].why.embedding)
    ]
    lines.append("")
    lines.append(format_hits([e.hit for e in explained], index, [e.why for e in explained]))
    return "\n".join(lines)


def _explained_json(explained: list[ToolExplanation]) -> str:
    from ._retrieval_explain import explanation_json

    return json.dumps(
        [{**_hit_json(e.hit), "explain": explanation_json(e.query, e.why)} for e in explained]
    )


def _hit_json(hit: Hit) -> dict[str, Any]:
    return {"name": hit.name, "server": hit.server, "tool": hit.tool, "score": hit.score}
