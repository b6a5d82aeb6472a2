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
        # Only the new bytes (and the one before them) can hold a new event's end.
        start = max(len(self._pending) - 1, 0)
        self._pending += chunk
        if self._pending.find(b"\n\n", start) < 0:
            if len(self._pending) > MAX_EVENT_BYTES:
                raise TransientFailure(
                    f"the endpoint sent an event longer than {MAX_EVENT_BYTES // 2**20} MiB"
                )
            return []
        *blocks, rest = bytes(self._pending).split(b"\n\n")
        self._pending = bytearray(rest)
        return self._decode_all(blocks)

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
        name = b""
        data: list[bytes] = []
        for line in block.split(b"\n"):
            field, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if field == b"data":
                data.append(value)
            elif field == b"event":
                name = value
        if not data:
            return None
        payload = b"\n".join(data)
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
        if wanted is None or not block.startswith(b"event:") or b"[DONE]" in block:
            return False
        end = block.find(b"\n")
        if end < 0 or b"\nevent:" in block:
            return False
        name = block[6:end]
        name = name[1:] if name.startswith(b" ") else name
        return bool(name) and name not in wanted
