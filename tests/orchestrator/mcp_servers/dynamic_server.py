"""A small stdio MCP server for the manager's tests, written with the SDK's low-level server.

Tools: `pid` (its process id, so a test can kill it), `echo`, `trace` (the W3C trace keys of the
request's `_meta`), `add_tool` and `remove_tool` (change the list, then announce it in both
protocol eras before answering). Tools added at run time answer "<name> says hello".
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

BUILT_IN = {
    "pid": ("Answers the server's process id.", {}),
    "echo": ("Answers its text.", {"text": {"type": "string"}}),
    "trace": ("Answers the trace keys of the request metadata as JSON.", {}),
    "add_tool": ("Adds a tool with this name and announces it.", {"name": {"type": "string"}}),
    "remove_tool": ("Removes a tool and announces it.", {"name": {"type": "string"}}),
}

bus = InMemorySubscriptionBus()
added: list[str] = []


def describe(name: str, description: str, properties: dict[str, Any]) -> types.Tool:
    schema = {"type": "object", "properties": properties, "required": sorted(properties)}
    return types.Tool(name=name, description=description, input_schema=schema)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    tools = [describe(name, *spec) for name, spec in BUILT_IN.items()]
    tools += [describe(name, f"A tool added at run time: {name}.", {}) for name in added]
    return types.ListToolsResult(tools=tools)


async def announce(ctx: ServerRequestContext[Any]) -> None:
    await bus.publish(ToolsListChanged())  # 2026 era: to open subscriptions/listen streams
    await ctx.session.send_tool_list_changed()  # 2025 era: unsolicited (dropped on 2026 links)


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "pid":
        return text(str(os.getpid()))
    if params.name == "echo":
        return text(str(args.get("text", "")))
    if params.name == "trace":
        meta = dict(ctx.meta or {})
        return text(
            json.dumps({k: v for k, v in meta.items() if k in ("traceparent", "tracestate")})
        )
    if params.name == "add_tool":
        added.append(str(args["name"]))
        await announce(ctx)
        return text(f"added {args['name']}")
    if params.name == "remove_tool" and args.get("name") in added:
        added.remove(str(args["name"]))
        await announce(ctx)
        return text(f"removed {args['name']}")
    if params.name in added:
        return text(f"{params.name} says hello")
    return types.CallToolResult(content=[types.TextContent(text="no such tool")], is_error=True)


server = Server(
    "corral-test-dynamic",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_subscriptions_listen=ListenHandler(bus),
)


async def main() -> None:
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main)
