"""`POST /v1/runs/{id}/retry`: a fan-out's failed items run again over HTTP, the done ones kept."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.service import CorralClient

from ._harness import TOKEN, WAIT, item_of, open_service, outputs, reporter

pytestmark = pytest.mark.anyio


@dataclass
class FlakyOnOne:
    """Item 1 declines to report until `recovered`; the others report at once."""

    recovered: bool = False

    def __call__(self, request: dict[str, Any]) -> Any:
        if item_of(request) == 1 and not self.recovered and not outputs(request):
            return "I would rather not say."
        return reporter(request)


async def test_retry_runs_the_failed_items_of_a_finished_fanout_again(tmp_path: Path) -> None:
    policy = FlakyOnOne()
    async with open_service(tmp_path, policy) as service:
        async with CorralClient(service.url, TOKEN) as client:
            run_id = (await client.submit(service.fanout(3)))["id"]
            with anyio.fail_after(WAIT):
                first = [e async for e in client.events(run_id)]
            policy.recovered = True
            retried = await service.http.post(f"/v1/runs/{run_id}/retry")
            with anyio.fail_after(WAIT):
                second = [e async for e in client.events(run_id)]
            results = await client.results(run_id)
        agents = (await service.http.get(f"/v1/runs/{run_id}/agents")).json()["agents"]
    assert first[-1].data["status"] == "failed"
    assert retried.status_code == 202, retried.text
    assert retried.json()["links"]["self"] == f"/v1/runs/{run_id}"
    assert second[-1].data["status"] == "done"
    assert [(r["status"], r["result"]) for r in results] == [
        ("done", {"n": 0}),
        ("done", {"n": 10}),
        ("done", {"n": 20}),
    ]
    assert [a["nickname"] for a in agents].count("item 1") == 2, "a fresh agent for the retry"


async def test_retry_of_an_unknown_run_or_an_exec_run_is_refused(tmp_path: Path) -> None:
    async with open_service(tmp_path, lambda request: "done") as service:
        async with CorralClient(service.url, TOKEN) as client:
            body = {"kind": "exec", "task": "say hi", "base_url": service.model_url}
            run_id = (await client.submit({**body, "cd": str(service.cwd)}))["id"]
            with anyio.fail_after(WAIT):
                [e async for e in client.events(run_id)]
        unknown = await service.http.post("/v1/runs/run-nothing/retry")
        not_fanout = await service.http.post(f"/v1/runs/{run_id}/retry")
    assert unknown.status_code == 404
    assert not_fanout.status_code == 422
    assert "only fan-outs have failed items to run again" in not_fanout.json()["error"]
