"""A stdio MCP server whose tools carry each kind of annotation, for the approval tests.

`peek` is read-only, `wipe` destructive, `fetch` open-world, `plain` unannotated; each answers
"<name> ran", so a test can tell a call that reached the server from one that was refused.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

HINTS: dict[str, types.ToolAnnotations | None] = {
    "peek": types.ToolAnnotations(read_only_hint=True, destructive_hint=False),
    "wipe": types.ToolAnnotations(read_only_hint=False, destructive_hint=True),
    "fetch": types.ToolAnnotations(read_only_hint=False, open_world_hint=True),
    "plain": None,
}


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {"target": {"type": "string"}}}
    tools = [
        types.Tool(
            name=name, description=f"The {name} tool.", input_schema=schema, annotations=hints
        )
        for name, hints in HINTS.items()
    ]
    return types.ListToolsResult(tools=tools)


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=f"{params.name} ran")])


server = Server("corral-test-annotated", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
