"""The SSE event stream: per-run ids, resuming without gap or duplicate, many readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.service import CorralClient, ServerEvent
from corral.orchestrator.service._events import EventLog
from corral.orchestrator.service._sse import event_stream, is_over

from ._harness import TOKEN, WAIT, Gate, Harness, open_service

pytestmark = pytest.mark.anyio


async def read_some(service: Harness, run_id: str, count: int) -> list[dict[str, Any]]:
    """Read `count` events with ids, then drop the connection."""
    got: list[dict[str, Any]] = []
    url = f"/v1/runs/{run_id}/events"
    async with service.http.stream("GET", url, timeout=None) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = response.aiter_lines()
        assert await anext(lines) == "retry: 3000"
        async for line in lines:
            if line.startswith("data: ") and '"seq"' in line:
                got.append(json.loads(line.removeprefix("data: ")))
                if len(got) == count:
                    break
    return got


async def all_events(client: CorralClient, run_id: str, after: int = 0) -> list[ServerEvent]:
    with anyio.fail_after(WAIT):
        return [e async for e in client.events(run_id, starting_after=after)]


def keys(events: list[ServerEvent]) -> list[tuple[int | None, str, int]]:
    return [(e.id, e.data["agent_id"], e.data["agent_seq"]) for e in events if e.id]


async def test_a_stream_cut_off_mid_run_resumes_with_last_event_id_exactly_once(
    tmp_path: Path,
) -> None:
    gate = Gate(held={1})
    async with open_service(tmp_path, gate) as service:
        try:
            async with CorralClient(service.url, TOKEN) as client:
                run_id = (await client.submit(service.fanout(3)))["id"]
                with anyio.fail_after(WAIT):
                    await gate.reached.wait()
                    before = await read_some(service, run_id, 2)
                gate.release()
                cut = before[-1]["seq"]
                with anyio.fail_after(WAIT):
                    rest = await _resume_with_header(service, run_id, cut)
                full = await all_events(client, run_id)
                after_end = await all_events(client, run_id, after=cut)
        finally:
            gate.release()
    seen = [(e["seq"], e["agent_id"], e["agent_seq"]) for e in before] + rest
    assert seen == keys(full) == keys(full[:cut]) + keys(after_end)
    assert [key[0] for key in seen] == list(range(1, len(seen) + 1))
    assert len({key[1:] for key in seen}) == len(seen)
    assert full[-1].event == "end" and full[-1].data["status"] == "done"


async def _resume_with_header(
    service: Harness, run_id: str, last: int
) -> list[tuple[int | None, str, int]]:
    rest: list[tuple[int | None, str, int]] = []
    headers = {"Last-Event-ID": str(last)}
    async with service.http.stream(
        "GET", f"/v1/runs/{run_id}/events", headers=headers, timeout=None
    ) as response:
        event_id: int | None = None
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                event_id = int(line.removeprefix("id: "))
            elif line.startswith("event: end"):
                break
            elif line.startswith("data: ") and event_id is not None:
                data = json.loads(line.removeprefix("data: "))
                rest.append((event_id, data["agent_id"], data["agent_seq"]))
                event_id = None
    return rest


async def test_a_hundred_concurrent_clients_each_see_the_whole_run(tmp_path: Path) -> None:
    readers = 100
    gate = Gate()
    connected = anyio.Event()
    started: list[int] = []
    seen: list[list[tuple[int | None, str, int]]] = []
    async with open_service(tmp_path, gate) as service:
        try:
            async with CorralClient(service.url, TOKEN, max_connections=None) as client:
                run_id = (await client.submit(service.fanout(2)))["id"]

                async def reader() -> None:
                    events: list[ServerEvent] = []
                    async for event in client.events(run_id):
                        events.append(event)
                        if len(events) == 1:
                            started.append(1)
                            if len(started) == readers:
                                connected.set()
                    seen.append(keys(events))

                with anyio.fail_after(WAIT * 2):
                    await gate.reached.wait()
                    async with anyio.create_task_group() as tg:
                        for _ in range(readers):
                            tg.start_soon(reader)
                        await connected.wait()
                        gate.release()
        finally:
            gate.release()
    assert len(seen) == readers
    assert all(s == seen[0] for s in seen) and len(seen[0]) > 2
    assert [key[0] for key in seen[0]] == list(range(1, len(seen[0]) + 1))


async def test_an_idle_stream_sends_heartbeat_comments_until_the_run_ends() -> None:
    log = EventLog()
    stream = event_stream("run-idle", log, 0, heartbeat=0.01)
    with anyio.fail_after(WAIT):
        frames = [await anext(stream) for _ in range(3)]
        log.finish({"status": "done"})
        rest = [frame async for frame in stream]
    assert frames[0].startswith(b"retry: 3000\nevent: metadata\n")
    assert frames[1] == frames[2] == b": ping\n\n"
    assert rest[-1] == b'id: 0\nevent: end\ndata: {"run_id":"run-idle","status":"done"}\n\n'
    assert is_over(log, 0, resumed=True) and not is_over(log, 0)
