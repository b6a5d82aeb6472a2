"""Runs over HTTP: a fan-out to completion, cancel, admission control and idempotency."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from corral.agents import open_sqlite_store
from corral.orchestrator.service import CorralClient, ServiceLimits

from ._harness import TOKEN, WAIT, Gate, open_service, reporter

pytestmark = pytest.mark.anyio


async def test_a_fanout_submitted_over_http_completes_with_readable_results(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service:
        async with CorralClient(service.url, TOKEN) as client:
            created = await client.submit(service.fanout(3, concurrency=2))
            run_id = created["id"]
            with anyio.fail_after(WAIT):
                events = [e async for e in client.events(run_id)]
            ending = events[-1]
            run = await client.get(run_id)
            results = await client.results(run_id)
        agents = (await service.http.get(f"/v1/runs/{run_id}/agents")).json()["agents"]
        listed = (await service.http.get("/v1/runs", params={"status": "done"})).json()
    assert created["status"] in ("queued", "running")
    assert created["links"]["events"] == f"/v1/runs/{run_id}/events"
    assert (ending.event, ending.data["status"]) == ("end", "done")
    finished = [e.data["payload"] for e in events if e.event == "item_finished"]
    assert sorted((p["index"], p["status"]) for p in finished) == [(n, "done") for n in range(3)]
    assert sum(e.event == "agent_started" for e in events) == 3
    assert run["status"] == "done" and run["items"] == {"done": 3}
    assert run["tokens"]["input_tokens"] > 0 and run["kind"] == "fanout"
    assert [r["result"] for r in results] == [{"n": 0}, {"n": 10}, {"n": 20}]
    assert len(agents) == 3
    assert [r["id"] for r in listed["runs"]] == [run_id]


async def test_cancel_stops_every_worker_and_leaves_the_journal_interrupted(
    tmp_path: Path,
) -> None:
    gate = Gate(expect=3)
    async with open_service(tmp_path, gate) as service:
        try:
            async with CorralClient(service.url, TOKEN) as client:
                run_id = (await client.submit(service.fanout(3, concurrency=3)))["id"]
                with anyio.fail_after(WAIT):
                    await gate.reached.wait()
                cancelled = await client.cancel(run_id)
                with anyio.fail_after(WAIT):
                    ending = [e async for e in client.events(run_id)][-1]
                run = await client.get(run_id)
                items = (await service.http.get(f"/v1/runs/{run_id}/items")).json()["items"]
        finally:
            gate.release()
        async with open_sqlite_store(service.home / "journal.sqlite") as store:
            journaled = await store.get_run(run_id)
    assert cancelled["status"] == "cancelled"
    assert (ending.event, ending.data["status"]) == ("end", "cancelled")
    assert run["status"] == "cancelled"
    assert [i["status"] for i in items].count("done") == 0
    assert journaled is not None and journaled.status == "interrupted"


async def test_a_full_queue_answers_429_with_retry_after(tmp_path: Path) -> None:
    gate = Gate()
    limits = ServiceLimits(max_running=1, max_queued=1, retry_after=7)
    async with open_service(tmp_path, gate, limits) as service:
        try:
            first = await service.http.post("/v1/runs", json=service.fanout(1))
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
            second = await service.http.post("/v1/runs", json=service.fanout(1))
            third = await service.http.post("/v1/runs", json=service.fanout(1))
            waiting = (await service.http.get(f"/v1/runs/{second.json()['id']}")).json()
        finally:
            gate.release()
    assert (first.status_code, second.status_code) == (202, 202)
    assert second.json()["status"] == "queued" and waiting["status"] == "queued"
    assert third.status_code == 429 and third.headers["Retry-After"] == "7"
    assert "retry in 7 s" in third.json()["error"]


async def test_resubmitting_with_the_same_idempotency_key_returns_the_same_run(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service:
        async with CorralClient(service.url, TOKEN) as client:
            first = await client.submit(service.fanout(1), idempotency_key="job-42")
            again = await client.submit(service.fanout(1), idempotency_key="job-42")
            other = await client.submit(service.fanout(1), idempotency_key="job-43")
            with anyio.fail_after(WAIT):
                for run_id in (first["id"], other["id"]):
                    [e async for e in client.events(run_id)]
        listed = (await service.http.get("/v1/runs")).json()["runs"]
    assert again["id"] == first["id"] and other["id"] != first["id"]
    assert sorted(r["id"] for r in listed) == sorted([first["id"], other["id"]])


async def test_an_exec_run_submitted_over_http_completes_with_its_agent(tmp_path: Path) -> None:
    async with open_service(tmp_path, lambda request: "all tidy") as service:
        async with CorralClient(service.url, TOKEN) as client:
            request = {
                "kind": "exec",
                "task": "tidy up",
                "base_url": service.model_url,
                "cd": str(service.cwd),
                "run_id": "run-tidy",
            }
            created = await client.submit(request)
            with anyio.fail_after(WAIT):
                ending = [e async for e in client.events("run-tidy")][-1]
            run = await client.get("run-tidy")
        agents = (await service.http.get("/v1/runs/run-tidy/agents")).json()["agents"]
        taken = await service.http.post("/v1/runs", json=request)
    assert created["id"] == "run-tidy"
    assert (ending.event, ending.data["status"]) == ("end", "completed")
    assert run["status"] == "completed" and run["kind"] == "exec"
    assert [(a["task"], a["final_message"]) for a in agents] == [("tidy up", "all tidy")]
    assert taken.status_code == 422 and "is taken" in taken.json()["error"]
