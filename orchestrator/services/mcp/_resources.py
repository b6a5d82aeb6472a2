"""The MCP resource tools: `list_mcp_resources`, `list_mcp_resource_templates`, `read_mcp_resource`.

They speak to the manager's live sessions, so every server that offers resources is reachable
through three tools instead of one per server (Codex's shapes: `server` and `cursor` to list,
`server` and `uri` to read). Answers are JSON; text contents come back whole and binary ones are
described by size, and the agent cuts long answers like any other tool output. A server that is
down, slow or refuses becomes a failed output that says so.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from corral.tools import OperationFailed, Tool, ToolContext, ToolOutput

from ._connection import McpConnection
from ._errors import McpError, McpUnavailable
from ._manager import McpManager
from ._results import describe_block

LIST_RESOURCES = "list_mcp_resources"
LIST_TEMPLATES = "list_mcp_resource_templates"
READ_RESOURCE = "read_mcp_resource"
RESOURCE_TOOL_NAMES = (LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE)

T = TypeVar("T")


class ListArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str | None = Field(
        default=None, description="Only this MCP server (default: every server with resources)."
    )
    cursor: str | None = Field(
        default=None, description="The nextCursor of an earlier answer (needs `server`)."
    )


class ReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(description="The MCP server that listed the resource.")
    uri: str = Field(min_length=1, description="The resource's URI, as listed.")


def resource_tools(manager: McpManager) -> list[Tool[Any]]:
    """The three resource tools over `manager`'s servers, in Codex's order."""
    lister = _Lister(manager)
    return [
        _tool(LIST_RESOURCES, _LIST_TEXT.format(what="resources"), ListArgs, lister.resources),
        _tool(
            LIST_TEMPLATES, _LIST_TEXT.format(what="resource templates"), ListArgs, lister.templates
        ),
        _tool(READ_RESOURCE, _READ_TEXT, ReadArgs, lister.read),
    ]


_LIST_TEXT = (
    "Lists the {what} MCP servers offer (JSON, each with its server). Give `server` to ask one"
    " server, and `cursor` (that server's nextCursor) for the next page."
)
_READ_TEXT = "Reads one resource of an MCP server by its URI (from list_mcp_resources)."


def _tool(
    name: str,
    description: str,
    args: type[BaseModel],
    handler: Callable[[Any, ToolContext], Awaitable[ToolOutput]],
) -> Tool[Any]:
    return Tool(name, description, args, handler, mutating=False, side_effects=False)


class _Lister:
    def __init__(self, manager: McpManager) -> None:
        self.manager = manager

    async def resources(self, args: ListArgs, ctx: ToolContext) -> ToolOutput:
        del ctx
        return await self._list(args, "resources", _list_resources)

    async def templates(self, args: ListArgs, ctx: ToolContext) -> ToolOutput:
        del ctx
        return await self._list(args, "resourceTemplates", _list_templates)

    async def read(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        del ctx
        result = await self._ask(args.server, lambda c: c.client.read_resource(args.uri))
        contents = [_describe_contents(item) for item in result.contents]
        return ToolOutput(_json({"server": args.server, "uri": args.uri, "contents": contents}))

    async def _list(self, args: ListArgs, key: str, fetch: _Fetch) -> ToolOutput:
        if args.cursor is not None and args.server is None:
            return ToolOutput.error("a `cursor` belongs to one server: give `server` too")
        if args.server is not None:
            items, cursor = await self._ask(args.server, lambda c: fetch(c, args.cursor))
            answer: dict[str, Any] = {key: [_with(args.server, i) for i in items]}
            return ToolOutput(_json(answer | ({"nextCursor": cursor} if cursor else {})))
        return ToolOutput(_json(await self._list_all(key, fetch)))

    async def _list_all(self, key: str, fetch: _Fetch) -> dict[str, Any]:
        """The first page of every server that offers resources; the rest are named."""
        found: list[dict[str, Any]] = []
        more: dict[str, str] = {}
        unavailable: dict[str, str] = {}
        for server in self.manager.server_names():
            try:
                conn, _ = self.manager.session(server)
                if conn.client.server_capabilities.resources is None:
                    continue
                items, cursor = await self._ask(server, lambda c: fetch(c, None))
            except McpError as exc:
                unavailable[server] = str(exc)
                continue
            found += [_with(server, item) for item in items]
            if cursor:
                more[server] = cursor
        answer: dict[str, Any] = {key: found}
        if more:
            answer["nextCursors"] = more
        if unavailable:
            answer["unavailable"] = unavailable
        return answer

    async def _ask(self, server: str, request: Callable[[McpConnection], Awaitable[T]]) -> T:
        conn, timeout = self.manager.session(server)
        try:
            with anyio.fail_after(timeout):
                return await request(conn)
        except TimeoutError:
            raise McpUnavailable(
                f"MCP server '{server}' did not answer within {timeout:g} s (tool_timeout_sec)"
            ) from None
        except MCPError as exc:
            raise OperationFailed(
                f"MCP server '{server}' refused: {exc} (code {exc.code})"
            ) from exc
        except ValidationError as exc:
            raise OperationFailed(f"MCP server '{server}' answered malformed data: {exc}") from exc


_Fetch = Callable[[McpConnection, str | None], Awaitable[tuple[list[BaseModel], str | None]]]


async def _list_resources(
    conn: McpConnection, cursor: str | None
) -> tuple[list[BaseModel], str | None]:
    page = await conn.client.list_resources(cursor=cursor, cache_mode="bypass")
    return list(page.resources), page.next_cursor


async def _list_templates(
    conn: McpConnection, cursor: str | None
) -> tuple[list[BaseModel], str | None]:
    page = await conn.client.list_resource_templates(cursor=cursor, cache_mode="bypass")
    return list(page.resource_templates), page.next_cursor


def _with(server: str, item: BaseModel) -> dict[str, Any]:
    return {"server": server, **item.model_dump(mode="json", by_alias=True, exclude_none=True)}


def _describe_contents(item: types.TextResourceContents | types.BlobResourceContents) -> Any:
    if isinstance(item, types.TextResourceContents):
        return item.model_dump(mode="json", by_alias=True, exclude_none=True)
    block = types.EmbeddedResource(type="resource", resource=item)
    return {"uri": item.uri, "mimeType": item.mime_type, "summary": describe_block(block)}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)
