"""Splitting the bytes a stdio client sends into lines, each at most `MAX_MESSAGE_BYTES`.

A line longer than the cap is dropped as its bytes arrive and stands as `OVERLONG`, which
`_malformed` answers with a parse error: a client that never ends its line cannot grow the
server without bound. The cap is the one corral's MCP client keeps for what a server writes
(`services.mcp`), so both ends of corral take the same messages.
"""

from __future__ import annotations

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The longest line (one JSON-RPC message) a client may send."""
OVERLONG = "\x00corral: a line over the size limit\x00"
"""What stands for a dropped line: never JSON, so the SDK hands it on as a parse failure."""


class LineSplitter:
    """Lines out of chunks of bytes, without their line ends; never holds more than `limit`
    bytes of an unfinished line."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self._pending = bytearray()
        self._overlong = False

    @property
    def held(self) -> int:
        """Bytes of the unfinished line held now."""
        return len(self._pending)

    def feed(self, chunk: bytes) -> list[str]:
        """The lines `chunk` ends, in order."""
        lines: list[str] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._keep(chunk[start:end])
            lines.append(self._take())
            start = end + 1
        self._keep(chunk[start:])
        return lines

    def end(self) -> list[str]:
        """The last line, when the input ended without a line end."""
        return [self._take()] if self._pending or self._overlong else []

    def _keep(self, piece: bytes) -> None:
        if self._overlong or len(self._pending) + len(piece) > self.limit:
            self._overlong = True
            self._pending.clear()
        else:
            self._pending += piece

    def _take(self) -> str:
        # Split at the byte: a newline byte is never part of a longer UTF-8 sequence.
        text = OVERLONG if self._overlong else self._pending.decode("utf-8", "replace")
        self._pending.clear()
        self._overlong = False
        return text.removesuffix("\r")
