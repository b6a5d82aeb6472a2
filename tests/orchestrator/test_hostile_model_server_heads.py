"""Requests built to make the scripted server hold memory or connections without bound: a head
of endless headers (many, one endless value or name, trickled in small pieces) is refused with a
431 or a closed connection once it passes the cap, an endless body with a 413, and a head that
never comes (or never ends) is disconnected after `HEAD_TIMEOUT`; the server answers the next
request as before."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx2
import pytest

from corral.orchestrator.model_server import _connection, serve_model_server
from corral.orchestrator.model_server._app import MAX_BODY_BYTES
from corral.orchestrator.model_server._connection import MAX_HEAD_BYTES

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]
DEADLINE = 20.0
FLOOD = 4 * MAX_HEAD_BYTES


def many_headers(piece: int) -> Iterator[bytes]:
    line = b"X-Flood: " + b"a" * 1000 + b"\r\n"
    block = line * (piece // len(line))
    for _ in range(FLOOD // len(block)):
        yield block


def one_long_value(piece: int) -> Iterator[bytes]:
    yield b"X-Long: "
    for _ in range(FLOOD // piece):
        yield b"v" * piece


def one_long_name(piece: int) -> Iterator[bytes]:
    for _ in range(FLOOD // piece):
        yield b"N" * piece


HEADS = {
    "many headers": (many_headers, 64 * 1024),
    "one endless value": (one_long_value, 64 * 1024),
    "one endless name": (one_long_name, 64 * 1024),
    "many headers in small pieces": (many_headers, 4 * 1024),
}


async def _send_head(port: int, pieces: Iterator[bytes]) -> tuple[bytes, bool]:
    """What the server answered, and whether it cut the connection while the head was sent."""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        try:
            await stream.send(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n")
            for piece in pieces:
                await stream.send(piece)
            await stream.send(b"\r\n\r\n")
        except (anyio.BrokenResourceError, OSError):
            return b"", True
        answer = b""
        try:
            while True:
                answer += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            return answer, True


@pytest.mark.parametrize("name", sorted(HEADS))
async def test_a_head_past_the_cap_is_refused_and_the_server_still_answers(name: str) -> None:
    make, piece = HEADS[name]
    async with serve_model_server(lambda request: "ok") as server:
        with anyio.fail_after(DEADLINE):
            answer, cut = await _send_head(server.port, make(piece))
            async with httpx2.AsyncClient(timeout=DEADLINE) as http:
                good = await http.post(server.base_url + "/responses", json={"input": "hi"})
    assert good.status_code == 200
    assert cut
    assert answer == b"" or answer.startswith(b"HTTP/1.1 431 "), answer[:200]


async def test_a_body_past_the_cap_is_a_413_saying_so() -> None:
    body = b'{"input":"' + b"a" * MAX_BODY_BYTES + b'"}'
    async with serve_model_server(lambda request: "ok") as server:
        with anyio.fail_after(DEADLINE):
            async with httpx2.AsyncClient(timeout=DEADLINE) as http:
                reply = await http.post(server.base_url + "/responses", content=body)
                good = await http.post(server.base_url + "/responses", json={"input": "hi"})
    assert good.status_code == 200
    assert reply.status_code == 413
    assert "MiB" in reply.json()["error"]["message"]


SLOW = {
    "nothing at all": [],
    "a head that never ends": [b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n"],
    "blank lines after an answer": [b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", b"\r\n"],
}


@pytest.mark.parametrize("name", sorted(SLOW))
async def test_a_client_that_never_finishes_a_head_is_disconnected(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Short, so the case ends soon; the default gives a slow client half a minute.
    monkeypatch.setattr(_connection, "HEAD_TIMEOUT", 0.2)
    async with serve_model_server(lambda request: "ok") as server:
        with anyio.fail_after(DEADLINE):
            async with await anyio.connect_tcp("127.0.0.1", server.port) as stream:
                for piece in SLOW[name]:
                    await stream.send(piece)
                received = b""
                with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                    while True:  # the server closes it: the wait ends, whatever came first
                        received += await stream.receive()
            async with httpx2.AsyncClient(timeout=DEADLINE) as http:
                good = await http.post(server.base_url + "/responses", json={"input": "hi"})
    assert good.status_code == 200
    assert received.count(b"HTTP/1.1 200") == sum(b"\r\n\r\n" in p for p in SLOW[name])
