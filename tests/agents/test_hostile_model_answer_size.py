"""A model endpoint whose answer never ends or inflates without bound: endless keep-alives,
deltas, blank lines or one unending line, an endless body, a gzip bomb. The attempt fails once
it has read the size cap, so memory stays bounded whatever the endpoint sends."""

from __future__ import annotations

import gzip

import anyio
import pytest
from anyio.abc import SocketStream

from corral.agents.model._http import HttpEndpoint
from corral.agents.model._retry import TransientFailure
from tests.agents._raw_endpoint import API_KEY, Respond, head, raw_endpoint

pytestmark = pytest.mark.hostile

TEST_DEADLINE = 20
SMALL_CAP = 1 << 20


async def _endless(stream: SocketStream, head: bytes, piece: bytes) -> None:
    await stream.send(head)
    while True:  # until the client hangs up
        await stream.send(piece)


def _gzip_bomb() -> bytes:
    # Valid JSON once inflated (64 MiB of spaces inside a string), a few dozen KiB on the wire.
    return gzip.compress(b'{"pad": "' + b" " * (64 << 20) + b'"}', compresslevel=9)


SSE_HEAD = head("200 OK", "Content-Type: text/event-stream")
ENDLESS_STREAMS = {
    "keep-alive comments": b": keep-alive\n\n" * 256,
    "blank lines": b"\n" * 4096,
    "deltas nobody waits for": (
        b'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", '
        b'"delta": "x"}\n\n'
    )
    * 64,
    "unwanted events that are not json": b"event: ignored\ndata: {not json\n\n" * 256,
    "one line that never ends": b"data: " + b"x" * 4096,
}


@pytest.mark.anyio
@pytest.mark.parametrize("piece", ENDLESS_STREAMS.values(), ids=ENDLESS_STREAMS.keys())
async def test_a_stream_that_never_ends_fails_the_attempt_at_the_size_cap(piece: bytes) -> None:
    async def respond(stream: SocketStream) -> None:
        await _endless(stream, SSE_HEAD, piece)

    with anyio.fail_after(TEST_DEADLINE):
        async with raw_endpoint(respond) as endpoint:
            http = HttpEndpoint(
                endpoint.base_url,
                API_KEY,
                connect_timeout=5,
                read_timeout=5,
                max_response_bytes=SMALL_CAP,
            )
            try:
                with pytest.raises(TransientFailure, match="passed 1 MiB"):
                    async with http.open_stream("/responses", b"{}", {"response.completed"}) as ev:
                        async for _ in ev:
                            pass
            finally:
                await http.aclose()


async def _endless_json(stream: SocketStream) -> None:
    await _endless(
        stream, head("200 OK", "Content-Type: application/json") + b'{"a": "', b"x" * 4096
    )


async def _bomb(stream: SocketStream) -> None:
    bomb = _gzip_bomb()
    answer = head(
        "200 OK",
        "Content-Type: application/json",
        "Content-Encoding: gzip",
        f"Content-Length: {len(bomb)}",
    )
    await stream.send(answer + bomb)


async def _bomb_stream(stream: SocketStream) -> None:
    bomb = gzip.compress(b": keep-alive\n\n" * (5 << 20), compresslevel=9)
    answer = head(
        "200 OK",
        "Content-Type: text/event-stream",
        "Content-Encoding: gzip",
        f"Content-Length: {len(bomb)}",
    )
    await stream.send(answer + bomb)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("respond", "stream"),
    [(_endless_json, False), (_bomb, False), (_bomb_stream, True)],
    ids=["an endless body", "a gzip bomb", "a gzipped stream of keep-alives"],
)
async def test_an_answer_past_the_size_cap_fails_the_attempt_whatever_its_encoding(
    respond: Respond, stream: bool
) -> None:
    with anyio.fail_after(TEST_DEADLINE):
        async with raw_endpoint(respond) as endpoint:
            http = HttpEndpoint(
                endpoint.base_url,
                API_KEY,
                connect_timeout=5,
                read_timeout=5,
                max_response_bytes=SMALL_CAP,
            )
            try:
                with pytest.raises(TransientFailure, match="passed 1 MiB"):
                    if stream:
                        async with http.open_stream("/responses", b"{}", None) as events:
                            async for _ in events:
                                pass
                    else:
                        await http.post_json("/responses", b"{}")
            finally:
                await http.aclose()
