"""Server-sent events over a run's `EventLog`: framing, resume cursors, heartbeats, the end.

Each stream is its own cursor over the log, so a slow client only falls behind itself. A stream
opens with a `metadata` event that carries `retry:`, sends every event after the cursor with its
per-run `id:`, a `: ping` comment when nothing happened for a while, and closes with `end` (or
`error` when the run crashed); the end of a run without any event carries `id: 0`, so a browser
has an id to reconnect with. Every frame that has fields has `data`: SSE client libraries
(httpx-sse, aiohttp-sse-client) hand a client each frame as an event, and a data-less one would
be a "message" whose JSON does not parse. Reconnecting with `Last-Event-ID: N` or
`?starting_after=N` resumes after N; once the stream has ended, a reconnect after its last event
gets 204 (`is_over`), which tells browsers to stop reconnecting. A run no tailer follows is
read through `refresh` whenever its `waiter` is woken, and at the latest every
`RESYNC_INTERVAL`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from ._events import RESYNC_INTERVAL, EventLog

RETRY_MS = 3000
HEARTBEAT_INTERVAL = 15.0


def frame(
    event: str, data: dict[str, Any], event_id: int | None = None, *, retry: int | None = None
) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    head += f"retry: {retry}\n" if retry is not None else ""
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


def is_over(log: EventLog, after: int, *, resumed: bool = False) -> bool:
    """Whether a client that saw up to event `after` has seen all a finished run has: `after`
    > 0, or a reconnect (`resumed`, it sent `Last-Event-ID`) to a run that journaled nothing."""
    return log.ended and (after > 0 or resumed) and after >= len(log.events)


async def event_stream(
    run_id: str,
    log: EventLog,
    after: int,
    *,
    heartbeat: float = HEARTBEAT_INTERVAL,
    refresh: Callable[[], Awaitable[None]] | None = None,
    waiter: Callable[[], anyio.Event] | None = None,
) -> AsyncIterator[bytes]:
    """The stream after event `after`; `refresh` reads the journal when no tailer does, at
    once when `waiter`'s event (taken before each read) says the journal grew."""
    yield frame("metadata", {"run_id": run_id, "starting_after": after}, retry=RETRY_MS)
    sent, quiet = after, 0.0
    wait = heartbeat if refresh is None else min(heartbeat, RESYNC_INTERVAL)
    woken = None if waiter is None else waiter()
    while True:
        for event in log.events[sent:]:
            yield frame(event.kind, event.to_json(), event.id)
            sent, quiet = event.id, 0.0
        if log.ending is not None and sent >= len(log.events):
            name = "error" if "error" in log.ending else "end"
            # id 0 gives a browser a Last-Event-ID, so its reconnect to an empty run gets 204
            yield frame(name, {"run_id": run_id, **log.ending}, 0 if sent == 0 else None)
            return
        if not await log.wait_beyond(sent, wait, woken):
            quiet += wait
        elif woken is None or not woken.is_set():
            continue
        if refresh is not None:
            woken = None if waiter is None else waiter()
            await refresh()
        if quiet >= heartbeat:
            yield b": ping\n\n"
            quiet = 0.0
