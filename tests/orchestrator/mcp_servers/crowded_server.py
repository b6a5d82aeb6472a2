"""A stdio MCP server that lists as many tools as its first argument says, over as many pages
as its second: a hostile server's flood, for the manager's cap on tools per server."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

TOOLS = int(sys.argv[1])
PAGES = int(sys.argv[2])
PER_PAGE = -(-TOOLS // PAGES)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = min(TOOLS, start + PER_PAGE)
    schema = {"type": "object", "properties": {}}
    tools = [
        types.Tool(name=f"tool_{n}", description=f"Tool number {n}.", input_schema=schema)
        for n in range(start, end)
    ]
    return types.ListToolsResult(tools=tools, next_cursor=str(end) if end < TOOLS else None)


server = Server("corral-test-crowded", on_list_tools=list_tools)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
