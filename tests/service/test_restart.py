"""A server stopped mid-run and started again: its unfinished runs carry on, or stay interrupted.

The model server outlives both service processes (here: two services in turn on one home), as a
real endpoint would; the SIGKILL case runs the real `corral serve` in tests/e2e.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.service import CorralClient, CorralService, ServiceLimits, ServiceOptions

from ..e2e import test_triage as triage_e2e
from ._harness import SCHEMA, TEMPLATE, TOKEN, WAIT, Gate, allowing_policy
from .test_pipelines import LABELS

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def service(home: Path, limits: ServiceLimits, model_url: str) -> AsyncIterator[CorralClient]:
    options = ServiceOptions(
        home=home,
        token=TOKEN,
        port=0,
        limits=limits,
        env={"CORRAL_HOME": str(home)},
        policy=allowing_policy(home.parent, model_url),
    )
    async with anyio.create_task_group() as tg:
        url = await tg.start(CorralService(options).run)
        async with CorralClient(url, TOKEN) as client:
            yield client
        tg.cancel_scope.cancel()


def fanout(count: int, model_url: str, cwd: Path) -> dict[str, Any]:
    return {
        "kind": "fanout",
        "items": [{"n": n} for n in range(count)],
        "template": TEMPLATE,
        "schema": SCHEMA,
        "concurrency": 1,
        "base_url": model_url,
        "cd": str(cwd),
    }


async def ending(client: CorralClient, run_id: str) -> dict[str, Any]:
    with anyio.fail_after(WAIT):
        events = [e async for e in client.events(run_id)]
    return events[-1].data


async def test_runs_running_and_queued_when_the_server_stops_are_finished_by_the_next_one(
    tmp_path: Path,
) -> None:
    gate = Gate({1})
    home = tmp_path / "home"
    limits = ServiceLimits(max_running=1)
    async with serve_model_server(gate) as model:
        async with service(home, limits, model.base_url) as client:
            first = (await client.submit(fanout(3, model.base_url, tmp_path)))["id"]
            second = (await client.submit(fanout(1, model.base_url, tmp_path)))["id"]
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
            stopped = [await client.get(first), await client.get(second)]
        async with open_sqlite_store(home / "journal.sqlite") as store:
            between = await store.get_run(first)
        gate.release()
        async with service(home, limits, model.base_url) as client:
            endings = [await ending(client, first), await ending(client, second)]
            results = await client.results(first)
    assert [run["status"] for run in stopped] == ["running", "queued"]
    assert between is not None and between.status == "interrupted"
    assert [e["status"] for e in endings] == ["done", "done"]
    assert [r["result"] for r in results] == [{"n": 0}, {"n": 10}, {"n": 20}]


async def test_with_on_restart_interrupt_an_unfinished_run_stays_interrupted(
    tmp_path: Path,
) -> None:
    gate = Gate({0})
    home = tmp_path / "home"
    async with serve_model_server(gate) as model:
        async with service(home, ServiceLimits(), model.base_url) as client:
            run_id = (await client.submit(fanout(2, model.base_url, tmp_path)))["id"]
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
        gate.release()
        async with service(home, ServiceLimits(on_restart="interrupt"), model.base_url) as client:
            end = await ending(client, run_id)
            run = await client.get(run_id)
        async with service(home, ServiceLimits(), model.base_url) as client:
            later = await client.get(run_id)
    assert end["status"] == "interrupted" and "on_restart is interrupt" in end["error"]
    assert run["status"] == "interrupted" and run["items"].get("done", 0) == 0
    assert later["status"] == "interrupted"


class HoldIssue:
    """The triage end-to-end policy, holding the first request about issue `number`."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.reached = anyio.Event()
        self.release = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if f"#{self.number}" in triage_e2e.task_of(request) and not self.release.is_set():
            self.reached.set()
            await self.release.wait()
        return triage_e2e.triager(request)


async def test_a_triage_stopped_by_the_server_is_finished_by_the_next_one_with_its_report(
    tmp_path: Path,
) -> None:
    policy = HoldIssue(13)
    home = tmp_path / "home"
    limits = ServiceLimits()
    async with serve_model_server(policy) as model:
        request = {
            "kind": "triage",
            "issues": triage_e2e.ISSUES,
            "labels": LABELS,
            "concurrency": 1,
            "base_url": model.base_url,
            "cd": str(tmp_path),
        }
        async with service(home, limits, model.base_url) as client:
            run_id = (await client.submit(request))["id"]
            with anyio.fail_after(WAIT):
                await policy.reached.wait()
        policy.release.set()
        async with service(home, limits, model.base_url) as client:
            end = await ending(client, run_id)
            report = await client.report(run_id)
    triaged = report["json"]
    assert end["status"] == "done"
    assert [i["number"] for i in triaged["issues"]] == [11, 12, 13, 14]
    assert all(i["labels"] for i in triaged["issues"])
