"""A client cannot grow `corral mcp-server` without bound with one endless message: a stdio line
past 64 MiB (the cap corral's own MCP client keeps) is dropped as it arrives, answered with a
JSON-RPC parse error (id `null`: nothing of it was read), and the session goes on; an HTTP body
past the same cap is refused with 413 and the same error, whether its length was declared or
not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from corral.orchestrator.mcp_server._lines import MAX_MESSAGE_BYTES, OVERLONG, LineSplitter

from ..service._harness import TOKEN
from ._harness import WAIT
from .test_real_client_mcp import stdio_server
from .test_transports import http_server

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]


def padded_ping(request_id: int, size: int) -> str:
    """A well-formed ping of about `size` bytes."""
    pad = "x" * size
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": {"p": pad}})


async def test_a_request_longer_than_the_cap_gets_a_parse_error_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    async with stdio_server(tmp_path) as lines:
        await lines.send(padded_ping(5, MAX_MESSAGE_BYTES + 1))
        refused = await lines.receive()
        await lines.send(padded_ping(6, 1000))
        pong = await lines.receive()
    assert refused["id"] is None
    assert refused["error"]["code"] == -32700
    assert "longer than 64 MiB" in refused["error"]["message"]
    assert pong == {"jsonrpc": "2.0", "id": 6, "result": {}}


async def in_pieces(body: bytes) -> AsyncIterator[bytes]:
    """`body` sent chunked, with no length declared up front."""
    step = 1 << 20
    for start in range(0, len(body), step):
        yield body[start : start + step]


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_an_http_body_longer_than_the_cap_is_refused_with_413(
    tmp_path: Path, declared: bool
) -> None:
    body = padded_ping(5, MAX_MESSAGE_BYTES + 1).encode()
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    async with (
        http_server(tmp_path, "http://127.0.0.1:9/v1") as url,
        httpx2.AsyncClient(headers=headers, timeout=WAIT) as http,
    ):
        content = body if declared else in_pieces(body)
        refused = await http.post(url, content=content)
    assert refused.status_code == 413
    answer = refused.json()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    assert "longer than 64 MiB" in answer["error"]["message"]


LIMIT = 8
CASES = [
    pytest.param([b"short\nline\n"], ["short", "line"], id="whole-lines"),
    pytest.param([b"12345678\n"], ["12345678"], id="exactly-the-limit"),
    pytest.param([b"123456789\nok\n"], [OVERLONG, "ok"], id="one-byte-over"),
    pytest.param([b"1234", b"5678", b"9abc", b"\nok\n"], [OVERLONG, "ok"], id="over-across-chunks"),
    pytest.param([b"x" * 100 + b"\n"], [OVERLONG], id="one-chunk-far-over"),
    pytest.param([b"x"] * 50, [OVERLONG], id="endless-then-eof"),
    pytest.param([b"crlf\r\n", b"tail"], ["crlf", "tail"], id="crlf-and-unended-tail"),
]


@pytest.mark.parametrize(("chunks", "expected"), CASES)
def test_a_line_over_the_cap_is_dropped_as_it_comes_never_held(
    chunks: list[bytes], expected: list[str]
) -> None:
    splitter = LineSplitter(LIMIT)
    lines: list[str] = []
    for chunk in chunks:
        lines += splitter.feed(chunk)
        assert splitter.held <= LIMIT
    lines += splitter.end()
    assert lines == expected
