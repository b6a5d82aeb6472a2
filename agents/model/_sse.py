"""Server-sent events split out of a byte stream, decoded only where a reader wants them.

An event is the lines up to a blank line (LF, CRLF or CR line ends); its `data:` lines are
joined with newlines, as the SSE standard says; comments and unknown fields are ignored. A
`[DONE]` data line ends the stream (Chat Completions). An event whose `event:` name is given and
not wanted is skipped without decoding its JSON: a Responses stream is mostly text deltas that
only a watcher needs. An event object whose `error` field is set raises the sorted failure.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from ._failures import stream_error
from ._retry import TransientFailure

_DONE = b"[DONE]"


class EventSplitter:
    """Feeds on the body's chunks as they arrive; `ended` once `[DONE]` was seen."""

    def __init__(self, wanted: Collection[str] | None, endpoint: str) -> None:
        self._wanted = wanted
        self._endpoint = endpoint
        self._pending = b""
        self.ended = False

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """The events `chunk` completes, in order; nothing after `[DONE]`."""
        pending = self._pending + chunk
        if b"\r" in pending:
            if pending.endswith(b"\r"):
                self._pending = pending  # a CRLF may be split between reads
                return []
            pending = pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return self._split(pending)

    def close(self) -> list[dict[str, Any]]:
        """At the end of the body: the events a held-back CR completes (an unfinished event
        is dropped, as the standard says)."""
        pending, self._pending = self._pending, b""
        return self._split(pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))

    def _split(self, pending: bytes) -> list[dict[str, Any]]:
        *blocks, self._pending = pending.split(b"\n\n")
        events: list[dict[str, Any]] = []
        for block in blocks:
            if self.ended:
                break
            event = self._decode(block)
            if event is not None:
                events.append(event)
        return events

    def _decode(self, block: bytes) -> dict[str, Any] | None:
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
            event = json.loads(payload)
        except ValueError as exc:
            raise TransientFailure(f"the endpoint sent an event that is not JSON: {exc}") from exc
        if not isinstance(event, dict):
            return None
        if event.get("error"):
            raise stream_error(event["error"], self._endpoint)
        return event
