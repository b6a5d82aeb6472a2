"""A stdio MCP server that exports its own spans over OTLP/HTTP to `TRACED_SERVER_ENDPOINT`.

The `mcp` SDK's server opens a SERVER span per request, parented by the trace context it finds
in the request's `_meta`; this server only installs an SDK tracer provider so those spans leave
the process. One tool: `add`.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

ADD = types.Tool(
    name="add",
    description="Adds two integers.",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ADD])


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    args = params.arguments or {}
    total = int(args.get("a", 0)) + int(args.get("b", 0))
    return types.CallToolResult(content=[types.TextContent(text=str(total))])


async def main() -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "traced-mcp"}))
    exporter = OTLPSpanExporter(endpoint=os.environ["TRACED_SERVER_ENDPOINT"])
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    server = Server("corral-test-traced", on_list_tools=list_tools, on_call_tool=call_tool)
    options = server.create_initialization_options(NotificationOptions())
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main)
