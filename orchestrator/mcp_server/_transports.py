"""The MCP server on its two transports: the process's stdio, and streamable HTTP with a token.

Over HTTP the endpoint is `/mcp`, behind the same bearer-token check as `corral serve`
(`service.BearerAuth`: 401 with `WWW-Authenticate` without the right token), on a socket
bound by corral (`orchestrator._uvicorn`), so port 0 works and a taken port is a clear error.
The SDK's DNS-rebinding guard is on for loopback hosts; a request body is capped as a stdio
line is (`_body_cap`).
"""

from __future__ import annotations

from typing import Any, cast

import anyio
from anyio.abc import TaskStatus
from mcp.server import Server
from mcp.server.stdio import stdio_server

from .._uvicorn import base_url, bind_listening_socket, serving
from ..service import BearerAuth
from ._body_cap import CappedBody
from ._malformed import AnsweringMalformed
from ._server import McpServerOptions, open_mcp_server
from ._stdin import claimed_stdin

MCP_PATH = "/mcp"
GRACEFUL_SHUTDOWN = 1


async def serve_stdio(options: McpServerOptions) -> None:
    """Serve one client on stdin/stdout until it closes them or the server is cancelled
    (`_stdin`); a line that is not JSON-RPC gets a JSON-RPC error (`_malformed`), not silence."""
    async with (
        open_mcp_server(options) as server,
        claimed_stdin() as lines,
        stdio_server(stdin=cast(Any, lines)) as (read, write),  # it only iterates its lines
    ):
        answering = AnsweringMalformed(read, write.send)
        await server.run(answering, write, server.create_initialization_options())


async def serve_http(
    options: McpServerOptions,
    *,
    token: str,
    host: str = "127.0.0.1",
    port: int = 0,
    task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve streamable HTTP until cancelled; `task_status` gets the endpoint's URL."""
    sock = bind_listening_socket(host, port)
    try:
        async with open_mcp_server(options) as server:
            app = _http_app(server, token, host)
            async with (
                server.session_manager.run(),
                serving(app, sock, name="MCP server", graceful_shutdown=GRACEFUL_SHUTDOWN),
            ):
                task_status.started(base_url(host, sock.getsockname()[1]) + MCP_PATH)
                await anyio.sleep_forever()
    finally:
        sock.close()


def _http_app(server: Server[Any], token: str, host: str) -> Any:
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    return BearerAuth(CappedBody(app), token)
