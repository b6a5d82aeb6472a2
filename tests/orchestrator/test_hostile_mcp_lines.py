"""What a hostile stdio MCP server writes on its pipes, read line by line: a line that never
ends, or runs past the message limit, is dropped as its bytes arrive (memory stays bounded and
each byte is looked at once, not once per chunk), and the lines after it still arrive."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import anyio
import pytest
from anyio.abc import ByteReceiveStream

from corral.orchestrator.services.mcp._stdio import read_lines

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

LIMIT = 1 << 20
CHUNK = 64 * 1024
WAIT = 20.0


class Chunks(ByteReceiveStream):
    """A pipe that yields the given chunks, then ends."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)

    async def receive(self, max_bytes: int = CHUNK) -> bytes:
        try:
            return next(self._chunks)
        except StopIteration:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        pass


def long_line(size: int, *, end: bytes = b"") -> Iterator[bytes]:
    """`size` bytes of one line, in pipe-sized chunks, then `end`."""
    left = size
    while left > 0:
        yield b"x" * min(CHUNK, left)
        left -= CHUNK
    if end:
        yield end


async def lines_of(chunks: Iterable[bytes]) -> list[str | None]:
    with anyio.fail_after(WAIT):
        return [line async for line in read_lines(Chunks(chunks), LIMIT)]


OVERLONG = {
    "just past the limit": LIMIT + 1,
    "eight times the limit": 8 * LIMIT,
    "sixty-four times the limit": 64 * LIMIT,
}


@pytest.mark.parametrize("size", OVERLONG.values(), ids=OVERLONG.keys())
async def test_an_overlong_line_is_dropped_and_the_next_one_still_arrives(size: int) -> None:
    chunks = [b'{"first": 1}\n', *long_line(size, end=b"\n"), b'{"after": 2}\n']

    assert await lines_of(chunks) == ['{"first": 1}', None, '{"after": 2}']


@pytest.mark.parametrize("size", OVERLONG.values(), ids=OVERLONG.keys())
async def test_a_line_that_never_ends_is_dropped_at_the_limit(size: int) -> None:
    assert await lines_of(long_line(size)) == [None]


async def test_an_overlong_line_ending_inside_a_chunk_with_more_lines_is_dropped_alone() -> None:
    chunks = [*long_line(LIMIT), b"tail\nnext\r\nlast"]

    assert await lines_of(chunks) == [None, "next", "last"]


async def test_a_line_at_the_limit_is_kept_whole() -> None:
    (line,) = await lines_of(long_line(LIMIT, end=b"\n"))

    assert line is not None and len(line) == LIMIT


async def test_line_ends_and_characters_split_between_chunks_are_put_back_together() -> None:
    data = "é ok\r\nnext ünïcode\n".encode()

    assert await lines_of([data[i : i + 1] for i in range(len(data))]) == [
        "é ok",
        "next ünïcode",
    ]
