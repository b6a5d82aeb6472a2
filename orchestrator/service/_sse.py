"""Server-sent events over a run's `EventLog`: framing, resume cursors, heartbeats, the end.

Each stream is its own cursor over the log, so a slow client only falls behind itself. A stream
opens with `retry:` and a `metadata` event, sends every event after the cursor with its per-run
`id:`, a `: ping` comment when nothing happened for a while, and closes with `end` (or `error`
when the run crashed). Reconnecting with `Last-Event-ID: N` or `?starting_after=N` resumes after N.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from ._events import EventLog

RETRY_MS = 3000
HEARTBEAT_INTERVAL = 15.0


def frame(event: str, data: dict[str, Any], event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"{head}event: {event}\ndata: {body}\n\n".encode()


def parse_cursor(last_event_id: str | None, starting_after: str | None) -> int:
    """The id to resume after; raises ValueError for anything but a whole number >= 0."""
    raw = last_event_id if last_event_id is not None else starting_after
    if raw is None or not raw.strip():
        return 0
    value = int(raw.strip())
    if value < 0:
        raise ValueError(raw)
    return value


async def event_stream(
    run_id: str, log: EventLog, after: int, *, heartbeat: float = HEARTBEAT_INTERVAL
) -> AsyncIterator[bytes]:
    yield f"retry: {RETRY_MS}\n\n".encode()
    yield frame("metadata", {"run_id": run_id, "starting_after": after})
    sent = after
    while True:
        for event in log.events[sent:]:
            yield frame(event.kind, event.to_json(), event.id)
            sent = event.id
        if log.ending is not None and sent >= len(log.events):
            name = "error" if "error" in log.ending else "end"
            yield frame(name, {"run_id": run_id, **log.ending})
            return
        if not await log.wait_beyond(sent, heartbeat):
            yield b": ping\n\n"
