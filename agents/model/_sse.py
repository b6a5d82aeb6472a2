"""Server-sent events split out of a byte stream, decoded only where a reader wants them.

An event is the lines up to a blank line (LF, CRLF or CR line ends); its `data:` lines are
joined with newlines, as the SSE standard says; comments and unknown fields are ignored. A
`[DONE]` data line ends the stream (Chat Completions). An event whose `event:` name is given and
not wanted is skipped without decoding its JSON: a Responses stream is mostly text deltas that
only a watcher needs. An event object whose `error` field is set raises the sorted failure.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from .._json import loads
from ._failures import stream_error
from ._retry import TransientFailure

_DONE = b"[DONE]"
_LF = ord("\n")
MAX_EVENT_BYTES = 64 * 1024 * 1024
"""The longest event kept while waiting for its end: a stream that never ends its event
fails the attempt instead of growing the process without bound."""


class EventSplitter:
    """Feeds on the body's chunks as they arrive; `ended` once `[DONE]` was seen."""

    def __init__(self, wanted: Collection[str] | None, endpoint: str) -> None:
        self._wanted = wanted
        self._wanted_names = None if wanted is None else {name.encode() for name in wanted}
        self._endpoint = endpoint
        self._pending = bytearray()
        self._held_cr = False
        self.ended = False

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """The events `chunk` completes, in order; nothing after `[DONE]`."""
        if self._held_cr:
            chunk, self._held_cr = b"\r" + chunk, False
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):  # a CRLF may be split between reads: decide with the next
                chunk, self._held_cr = chunk[:-1], True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        start = 0
        if self._pending:
            # Only the new bytes (and the one before them) can hold a new event's end.
            start = len(self._pending) - 1
            self._pending += chunk
            if self._pending.find(b"\n\n", start) < 0:
                return self._held_back()
            data = bytes(self._pending)
        else:
            data = bytes(chunk)  # the usual read holds whole events: no copy to split
        blocks, rest = _split_events(data, start)
        self._pending = bytearray(rest)
        return self._decode_all(blocks) if blocks else self._held_back()

    def _held_back(self) -> list[dict[str, Any]]:
        """Nothing yet: the pending event has not ended (and may not grow past the limit)."""
        if len(self._pending) > MAX_EVENT_BYTES:
            raise TransientFailure(
                f"the endpoint sent an event longer than {MAX_EVENT_BYTES // 2**20} MiB"
            )
        return []

    def close(self) -> list[dict[str, Any]]:
        """At the end of the body: the events a held-back CR completes (an unfinished event
        is dropped, as the standard says)."""
        return self.feed(b"\n") if self._held_cr else []

    def _decode_all(self, blocks: list[bytes]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        for block in blocks:
            if self.ended:
                break
            event = self._decode(block)
            if event is not None:
                events.append(event)
        return events

    def _decode(self, block: bytes) -> dict[str, Any] | None:
        if self._unwanted(block):
            return None
        name, payload = _fields(block)
        if payload is None:
            return None
        if payload.startswith(_DONE):
            self.ended = True
            return None
        wanted = self._wanted
        if wanted is not None and name and name.decode("utf-8", "replace") not in wanted:
            return None
        try:
            event = loads(payload)
        except ValueError as exc:
            raise TransientFailure(f"the endpoint sent an event that is not JSON: {exc}") from exc
        if not isinstance(event, dict):
            return None
        if event.get("error"):
            raise stream_error(event["error"], self._endpoint)
        return event

    def _unwanted(self, block: bytes) -> bool:
        """True for a block that names, on its first line and only there, an event nobody
        wants, and cannot end the stream: skipped without reading its other lines (most of a
        Responses stream is deltas). Anything else is read line by line, as the standard says."""
        wanted = self._wanted_names
        if wanted is None or not block.startswith(b"event:"):
            return False
        end = block.find(b"\n")
        if end < 0:
            return False
        if block.find(b"\n", end + 1) < 0:
            # The usual event: its name, then one line, which only has to be looked at.
            if block.startswith(b"event:", end + 1) or _is_done(block, end + 1):
                return False
        elif b"[DONE]" in block or b"\nevent:" in block:
            return False
        name = block[6:end]
        name = name[1:] if name.startswith(b" ") else name
        return bool(name) and name not in wanted


def _split_events(data: bytes, start: int) -> tuple[list[bytes], bytes]:
    """`data.split(b"\\n\\n")`: the blocks that end in a blank line and what follows them, with
    no blank line before `start`. Found line by line: looking for one byte is a `memchr`, many
    times quicker than looking for two on a 30 KB read of a Responses stream."""
    blocks: list[bytes] = []
    begin, last = 0, len(data) - 1
    at = data.find(b"\n", start)
    while 0 <= at < last:
        if data[at + 1] == _LF:
            blocks.append(data[begin:at])
            begin = at + 2
            at = data.find(b"\n", begin)
        else:
            at = data.find(b"\n", at + 1)
    return blocks, data[begin:]


def _is_done(block: bytes, at: int) -> bool:
    """Whether the line at `at` is a data line that ends the stream."""
    return block.startswith(b"data:[DONE]", at) or block.startswith(b"data: [DONE]", at)


def _fields(block: bytes) -> tuple[bytes, bytes | None]:
    """The event's name (its last `event:` line) and its data lines joined (None: no data)."""
    end = block.find(b"\n")
    one_data_line = end > 0 and block.find(b"\n", end + 1) < 0
    if one_data_line and block.startswith(b"event:") and block.startswith(b"data:", end + 1):
        # The usual event, a name and one data line, read without splitting a copy of it.
        return _value(block[6:end]), _value(block[end + 6 :])
    name = b""
    data: list[bytes] = []
    for line in block.split(b"\n"):
        field, _, value = line.partition(b":")
        if field == b"data":
            data.append(_value(value))
        elif field == b"event":
            name = _value(value)
    return name, b"\n".join(data) if data else None


def _value(raw: bytes) -> bytes:
    """A field's value: what follows its colon, less one leading space."""
    return raw[1:] if raw.startswith(b" ") else raw
