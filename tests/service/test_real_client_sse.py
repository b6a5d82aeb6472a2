"""The run API and its event stream, read by the clients people use: httpx with httpx-sse,
aiohttp, and curl. Each reads what the docs promise: JSON in every event, ids that resume
without loss or duplicate, the 204 that ends a finished stream, JSON error bodies."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import httpx
import httpx_sse
import pytest

from ._harness import TOKEN, WAIT, Gate, Harness, open_service, reporter

pytestmark = pytest.mark.anyio

AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def finished_run(service: Harness, count: int = 2) -> str:
    """A fan-out over `count` items, waited for until it is done."""
    run_id = str((await service.http.post("/v1/runs", json=service.fanout(count))).json()["id"])
    await wait_for_end(service, run_id)
    return run_id


async def wait_for_end(service: Harness, run_id: str) -> None:
    with anyio.fail_after(WAIT):
        async with service.http.stream("GET", f"/v1/runs/{run_id}/events") as response:
            async for line in response.aiter_lines():
                if line.startswith("event: end"):
                    break


async def sse_events(
    client: httpx.AsyncClient, run_id: str, last_event_id: int | None = None, stop: int = 0
) -> list[httpx_sse.ServerSentEvent]:
    """The stream as httpx-sse hands it over; after `stop` events with ids, the client hangs up."""
    headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
    url = f"/v1/runs/{run_id}/events"
    seen: list[httpx_sse.ServerSentEvent] = []
    with anyio.fail_after(WAIT):
        async with httpx_sse.aconnect_sse(client, "GET", url, headers=headers) as source:
            source.response.raise_for_status()
            async for event in source.aiter_sse():
                seen.append(event)
                if stop and len([e for e in seen if e.id]) == stop:
                    break
    return seen


def keys(events: list[httpx_sse.ServerSentEvent]) -> list[tuple[int, str, int]]:
    found = [e.json() for e in events if e.event not in ("metadata", "end", "error")]
    return [(d["seq"], d["agent_id"], d["agent_seq"]) for d in found]


async def test_httpx_sse_gets_json_in_every_event_and_the_retry_on_the_first(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service:
        run_id = await finished_run(service)
        async with httpx.AsyncClient(base_url=service.url, headers=AUTH) as client:
            events = await sse_events(client, run_id)
    data = [event.json() for event in events]  # no data-less frame reaches the client
    assert events[0].event == "metadata" and events[0].retry == 3000
    assert data[0] == {"run_id": run_id, "starting_after": 0}
    assert events[-1].event == "end" and data[-1]["status"] == "done"
    assert [int(e.id) for e in events[1:-1]] == list(range(1, len(events) - 1))


async def test_httpx_sse_resumes_a_dropped_stream_with_last_event_id_exactly_once(
    tmp_path: Path,
) -> None:
    gate = Gate(held={1})
    async with open_service(tmp_path, gate) as service:
        run_id = (await service.http.post("/v1/runs", json=service.fanout(3))).json()["id"]
        async with httpx.AsyncClient(base_url=service.url, headers=AUTH) as client:
            try:
                with anyio.fail_after(WAIT):
                    await gate.reached.wait()
                before = await sse_events(client, run_id, stop=3)
                gate.release()
                rest = await sse_events(client, run_id, last_event_id=int(before[-1].id))
                whole = await sse_events(client, run_id)
            finally:
                gate.release()
    assert rest[0].json()["starting_after"] == int(before[-1].id)
    assert keys(before) + keys(rest) == keys(whole)
    assert len(set(keys(whole))) == len(keys(whole))
    assert rest[-1].event == "end"


async def test_aiohttp_reads_an_utf8_event_stream_and_json_errors(tmp_path: Path) -> None:
    async with open_service(tmp_path, reporter) as service:
        run_id = await finished_run(service)
        async with aiohttp.ClientSession(service.url, headers=AUTH) as session:
            with anyio.fail_after(WAIT):
                async with session.get(f"/v1/runs/{run_id}/events") as stream:
                    kind, charset = stream.content_type, stream.charset
                    cache = stream.headers["Cache-Control"]
                    text = (await stream.read()).decode()
                async with session.get("/v1/runs/run-none/events") as missing:
                    unknown = (missing.status, await missing.json())
    assert (kind, charset, cache) == ("text/event-stream", "utf-8", "no-store")
    assert text.startswith("retry: 3000\nevent: metadata\n")
    assert text.rstrip().split("\n\n")[-1].startswith("event: end\n")
    assert unknown == (404, {"error": "no run run-none"})


def curl(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [
        "curl",
        "-sS",
        "-N",
        "--max-time",
        str(int(WAIT)),
        "-H",
        f"Authorization: Bearer {TOKEN}",
    ]
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=WAIT + 5)


async def test_curl_over_http_1_0_and_1_1_streams_a_run_and_a_resume_after_its_end_gets_204(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service:
        run_id = await finished_run(service)
        url = f"{service.url}/v1/runs/{run_id}/events"
        streamed = await anyio.to_thread.run_sync(curl, url)
        old = await anyio.to_thread.run_sync(curl, "-0", "-i", url)
        last = [line for line in streamed.stdout.splitlines() if line.startswith("id: ")][-1]
        over = await anyio.to_thread.run_sync(
            curl, "-o", "/dev/null", "-w", "%{http_code}", "-H", f"Last-Event-ID: {last[4:]}", url
        )
    assert streamed.returncode == 0, streamed.stderr
    assert streamed.stdout.rstrip().split("\n\n")[-1].startswith("event: end\n")
    assert old.returncode == 0 and "connection: close" in old.stdout.lower()
    assert old.stdout.split("\n\n", 1)[1] == streamed.stdout, "1.0 gets the same stream"
    assert over.stdout == "204"


async def test_a_head_request_on_a_live_stream_leaves_the_connection_free(
    tmp_path: Path,
) -> None:
    gate = Gate(held={0})
    async with open_service(tmp_path, gate) as service:
        run_id = (await service.http.post("/v1/runs", json=service.fanout(1))).json()["id"]
        one = httpx.Limits(max_connections=1)  # the next request must reuse the connection
        try:
            async with httpx.AsyncClient(base_url=service.url, headers=AUTH, limits=one) as client:
                with anyio.fail_after(WAIT):
                    await gate.reached.wait()
                    head = await client.head(f"/v1/runs/{run_id}/events")
                    status = await client.get(f"/v1/runs/{run_id}")
        finally:
            gate.release()
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert status.json()["status"] == "running"


@pytest.mark.parametrize(
    ("method", "path", "status", "allowed"),
    [
        ("GET", "/v1/nothing", 404, None),
        ("PUT", "/v1/runs", 405, {"GET", "HEAD", "POST"}),
        ("DELETE", "/v1/runs/run-x", 405, {"GET", "HEAD"}),
        ("GET", "/v1/runs/run-x/cancel", 405, {"POST"}),
    ],
)
async def test_unknown_paths_and_methods_answer_with_a_json_error(
    tmp_path: Path, method: str, path: str, status: int, allowed: set[str] | None
) -> None:
    async with open_service(tmp_path, reporter) as service:
        answer = await service.http.request(method, path)
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"].startswith(f"{method} {path}: ")
    assert allowed is None or set(answer.headers["allow"].split(", ")) == allowed


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{bad", "invalid run request: Invalid JSON: key must be a string"),
        (b"[]", "invalid run request: Input should be an object"),
        (b'{"kind": "fanout", "items": 5}', "invalid run request: fanout.items: Input should"),
    ],
)
async def test_a_bad_body_gets_a_422_whose_error_reads_as_one_line(
    tmp_path: Path, body: bytes, expected: str
) -> None:
    async with open_service(tmp_path, reporter) as service:
        answer = await service.http.post("/v1/runs", content=body)
    error: dict[str, Any] = answer.json()
    assert answer.status_code == 422 and error["error"].startswith(expected), error
    assert "\n" not in error["error"] and ": :" not in error["error"]


async def test_a_client_that_hangs_up_mid_stream_leaves_the_run_to_finish(
    tmp_path: Path,
) -> None:
    gate = Gate(held={1})
    async with open_service(tmp_path, gate) as service:
        run_id = (await service.http.post("/v1/runs", json=service.fanout(2))).json()["id"]
        try:
            async with httpx.AsyncClient(base_url=service.url, headers=AUTH) as client:
                with anyio.fail_after(WAIT):
                    await gate.reached.wait()
                await sse_events(client, run_id, stop=2)
        finally:
            gate.release()
        async with httpx.AsyncClient(base_url=service.url, headers=AUTH) as client:
            rest = await sse_events(client, run_id)
            results = (await client.get(f"/v1/runs/{run_id}/results")).json()["results"]
    assert rest[-1].event == "end" and json.loads(rest[-1].data)["status"] == "done"
    assert [r["result"] for r in results] == [{"n": 0}, {"n": 10}]


@pytest.mark.parametrize(
    ("header", "status"),
    [
        (f"Bearer {TOKEN}", 200),
        (f"bearer {TOKEN}", 200),
        (f"BEARER  {TOKEN}", 200),
        (f"Bearer {TOKEN}x", 401),
        (f"Basic {TOKEN}", 401),
        (TOKEN, 401),
        ("bearer", 401),
        (f"bearer{TOKEN}", 401),
    ],
)
async def test_the_bearer_scheme_is_read_case_insensitively_and_only_the_token_opens(
    tmp_path: Path, header: str, status: int
) -> None:
    async with open_service(tmp_path, reporter) as service:
        answer = await service.http.get("/v1/runs", headers={"Authorization": header})
    assert answer.status_code == status


def stalled_reader(url: str, run_id: str) -> socket.socket:
    """A connection asking for the stream that then reads nothing (a small receive window)."""
    host, port = url.removeprefix("http://").split(":")
    conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    conn.settimeout(WAIT)
    conn.connect((host, int(port)))
    request = (
        f"GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    )
    conn.sendall(request.encode())
    return conn


def read_to_close(conn: socket.socket) -> bytes:
    chunks = []
    with conn:
        while chunk := conn.recv(1 << 16):
            chunks.append(chunk)
    return b"".join(chunks)


async def test_a_client_that_stops_reading_holds_up_neither_the_run_nor_its_own_events(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service:
        run_id = (await service.http.post("/v1/runs", json=service.fanout(20))).json()["id"]
        conn = await anyio.to_thread.run_sync(stalled_reader, service.url, run_id)
        await wait_for_end(service, run_id)
        status = (await service.http.get(f"/v1/runs/{run_id}")).json()["status"]
        raw = await anyio.to_thread.run_sync(read_to_close, conn)
    body = raw.split(b"\r\n\r\n", 1)[1].decode()
    ids = [int(line[4:]) for line in body.splitlines() if line.startswith("id: ")]
    assert status == "done", "the run finished while its reader read nothing"
    assert ids == list(range(1, len(ids) + 1)) and len(ids) > 60
    assert "event: end\n" in body
