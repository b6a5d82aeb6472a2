"""A supervisor's run in the dashboard: workers under the call that spawned them, figures rolled
up once, a failed tool call highlighted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_supervisor_close import call, is_worker, outputs
from tests.service._harness import open_service

from ._cdp import open_page
from .test_dashboard import artifacts, open_run, sign_in

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

COUNT = "document.querySelectorAll"
GET = "document.getElementById"


class SpawnTwo:
    """The supervisor spawns two workers in one response and waits; each worker calls a tool
    that does not exist (a failed call), then answers."""

    def __call__(self, request: dict[str, Any]) -> Any:
        done = outputs(request)
        if is_worker(request):
            return "worker done" if done else [call("bad", "no_such_tool", {})]
        if not done:
            return [
                call("spawn-a", "spawn_agent", {"message": "a", "role": "general"}),
                call("spawn-b", "spawn_agent", {"message": "b", "role": "general"}),
            ]
        if "wait" not in done:
            workers = [json.loads(done[c])["agent_id"] for c in ("spawn-a", "spawn-b")]
            return [call("wait", "wait_agent", {"targets": workers, "timeout_ms": 20000})]
        return "both done"


async def test_workers_sit_under_their_spawning_call_with_figures_rolled_up_once(
    tmp_path: Path,
) -> None:
    async with (
        open_service(tmp_path, SpawnTwo()) as service,
        open_page(tmp_path / "profile") as page,
    ):
        await sign_in(page, service)
        request = {
            "kind": "exec",
            "task": "split the work",
            "role": "supervisor",
            "base_url": service.model_url,
            "cd": str(service.cwd),
        }
        run_id = (await service.http.post("/v1/runs", json=request)).json()["id"]
        await open_run(page, run_id)
        await page.wait_for("document.body.dataset.stream === 'ended'")
        groups = await page.evaluate(
            """[...document.querySelectorAll('#agent-tree li.call')].map((li) => ({
                call: li.querySelector('[data-spawn-call]').dataset.spawnCall,
                children: li.querySelectorAll('[data-agent]').length}))"""
        )
        figures = await page.evaluate(
            "document.querySelector('#agent-tree > li > .node .figures').textContent"
        )
        failed = await page.evaluate(f"{COUNT}('#agent-tree .badge.bad').length")
        failed_spans = await page.evaluate(f"{COUNT}('#timeline .span-failed').length")
        await page.evaluate("document.querySelector('#timeline .span-tool').click(); true")
        inspected = await page.evaluate(f"{GET}('inspector-args').textContent")
        run = (await service.http.get(f"/v1/runs/{run_id}")).json()
        await page.screenshot(artifacts(tmp_path) / "supervisor-tree.png")
    assert sorted(groups, key=lambda g: g["call"]) == [
        {"call": "spawn-a", "children": 1},
        {"call": "spawn-b", "children": 1},
    ]
    total = run["tokens"]["input_tokens"] + run["tokens"]["output_tokens"]
    assert figures.startswith(f"{total} tok · ${run['cost_usd']:.4f}")
    assert failed == 2 and failed_spans == 2
    assert inspected.endswith("characters (content capture is off on the server)")
