"""A stream that is over stays over: a browser reconnecting after the end gets 204, even for a
run that ended without journaling any event, while a first connection still sees the end."""

from __future__ import annotations

import anyio
import pytest

from corral.orchestrator.service._events import EventLog
from corral.orchestrator.service._sse import event_stream, is_over

from ._harness import WAIT

pytestmark = pytest.mark.anyio


async def test_a_run_without_events_gives_the_browser_an_id_to_reconnect_with() -> None:
    log = EventLog()
    log.finish({"status": "failed", "error": "no model"})
    with anyio.fail_after(WAIT):
        frames = [frame async for frame in event_stream("run-empty", log, 0)]
    assert frames[-1].startswith(b"id: 0\nevent: error\n")
    assert is_over(log, 0, resumed=True), "the reconnect (Last-Event-ID: 0) gets 204"
    assert not is_over(log, 0), "a first connection still sees how the run ended"


async def test_a_reconnect_after_the_last_event_of_a_finished_run_is_over() -> None:
    log = EventLog()
    assert not is_over(log, 0, resumed=True), "a live run's stream goes on"
    log.finish({"status": "done"})
    assert is_over(log, 0, resumed=True) and is_over(log, 3)
