"""A remote MCP server over streamable HTTP cannot grow corral without bound: a JSON body past
64 MiB (the line cap corral keeps for stdio servers) is refused as it arrives, and so is a
compressed answer, whose size on the wire says nothing of its size read. The server fails to
connect with a one-line reason instead. (The SDK caps one server-sent event at 1 MiB itself.)"""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from corral.agents import McpServerConfig
from corral.orchestrator._http_caps import MAX_MESSAGE_BYTES
from corral.orchestrator._uvicorn import base_url, bind_listening_socket, serving
from corral.orchestrator.services.mcp import ServerState, open_mcp_manager

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

WAIT = 60.0
PAD = MAX_MESSAGE_BYTES + 1024


def initialized(request_id: Any, version: str, pad: int) -> bytes:
    """An initialize result, its instructions `pad` bytes long."""
    result = {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "big", "version": "1"},
        "instructions": "x" * pad,
    }
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


def big_server(how: str) -> Any:
    """An ASGI app that answers the handshake with an initialize result `how` says."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        if request.method != "POST":
            await Response(status_code=405)(scope, receive, send)
            return
        sent = json.loads(await request.body())
        if "id" not in sent:
            await Response(status_code=202)(scope, receive, send)
            return
        version = sent.get("params", {}).get("protocolVersion", "2025-06-18")
        await _answer(how, sent["id"], version)(scope, receive, send)

    return app


def _answer(how: str, request_id: Any, version: str) -> Response:
    if how == "gzip":
        body = gzip.compress(initialized(request_id, version, 10))
        headers = {"content-encoding": "gzip"}
        return Response(body, media_type="application/json", headers=headers)
    body = initialized(request_id, version, PAD)

    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 1 << 20):
            yield body[start : start + (1 << 20)]

    return StreamingResponse(pieces(), media_type="application/json")


@asynccontextmanager
async def serving_big(how: str) -> AsyncIterator[str]:
    sock = bind_listening_socket("127.0.0.1", 0)
    try:
        async with serving(big_server(how), sock, name="big MCP server", graceful_shutdown=1):
            yield base_url("127.0.0.1", sock.getsockname()[1]) + "/mcp"
    finally:
        sock.close()


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("json", "sent a body longer than 64 MiB"),
        ("gzip", "answered compressed (gzip)"),
    ],
)
async def test_a_remote_mcp_server_past_the_message_cap_fails_to_connect(
    how: str, said: str
) -> None:
    async with serving_big(how) as url:
        with anyio.fail_after(WAIT):
            async with open_mcp_manager({"big": McpServerConfig(url=url)}) as manager:
                status = manager.status("big")
    assert status.state is ServerState.FAILED
    assert status.error is not None and said in status.error
    assert "\n" not in status.error
