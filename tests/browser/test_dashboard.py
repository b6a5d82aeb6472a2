"""The run dashboard in a real headless chromium: sign in, follow a live fan-out, approve a call.

Each test starts `corral serve` in front of the scripted model server and drives the system's
chromium over the DevTools protocol (`_cdp.py`). Screenshots are kept as artifacts in
`$CORRAL_BROWSER_ARTIFACTS` (the test's own folder when unset); the docs' images come from here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import ServiceConfig
from corral.tools import SandboxMode
from tests.e2e._cli import corral_env, run_corral
from tests.service._harness import (
    TOKEN,
    WAIT,
    Gate,
    Harness,
    item_of,
    open_service,
    outputs,
    reporter,
)

from ._cdp import Page, open_page

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]

ITEMS = 200
LIVE_DEADLINE = 120.0
GET = "document.getElementById"


def artifacts(tmp_path: Path) -> Path:
    return Path(os.environ.get("CORRAL_BROWSER_ARTIFACTS", tmp_path / "artifacts"))


async def sign_in(page: Page, service: Harness) -> None:
    await page.goto(f"{service.url}/")
    assert await page.evaluate("location.pathname") == "/signin"
    page.events.clear()
    await page.evaluate(
        f"document.getElementById('token').value = {json.dumps(TOKEN)};"
        "document.getElementById('signin-form').submit(); true"
    )
    await page.wait_event("Page.loadEventFired")
    where = await page.evaluate("location.pathname + ' ' + document.body.innerText")
    assert where.startswith("/ "), where
    assert await page.evaluate("document.cookie") == "", "the session cookie is HttpOnly"


async def open_run(page: Page, run_id: str) -> None:
    await page.evaluate(f"location.hash = {json.dumps('#/runs/' + run_id)}; true")
    await page.wait_for(f"corralDashboard.runId === {json.dumps(run_id)} && corralDashboard.run")


async def test_a_browser_signs_in_and_follows_a_live_fanout_to_the_end(tmp_path: Path) -> None:
    gate = Gate(expect=1)
    kept = artifacts(tmp_path)
    async with open_service(tmp_path, gate) as service, open_page(tmp_path / "profile") as page:
        await sign_in(page, service)
        submitted = await service.http.post("/v1/runs", json=service.fanout(ITEMS))
        run_id = submitted.json()["id"]
        await page.wait_for(f"document.querySelector('[data-run=\"{run_id}\"]')")
        with anyio.fail_after(WAIT):
            await gate.reached.wait()
        await open_run(page, run_id)
        await page.wait_for(
            f"corralDashboard.stream.opens === 1 && corralDashboard.items.length === {ITEMS}"
        )
        assert await page.evaluate("document.body.dataset.stream") is None
        gate.release()
        await page.wait_for("document.body.dataset.stream === 'ended'", LIVE_DEADLINE)
        shown = json.loads(
            await page.evaluate("document.getElementById('run-totals').dataset.items")
        )
        stream = await page.evaluate(
            "({...corralDashboard.stream, readyState: corralDashboard.source.readyState})"
        )
        rows = await page.evaluate("document.querySelectorAll('#items tbody tr').length")
        await page.screenshot(kept / "run-view.png")
        await page.screenshot(kept / "run-view-whole.png", whole_page=True)
        await page.evaluate("location.hash = '#/'; true")
        await page.wait_for(f"document.querySelector('[data-run=\"{run_id}\"] .status-done')")
        await page.screenshot(kept / "run-list.png")
    status = await run_corral(
        ["status", run_id, "--json"], env=corral_env(service.home), cwd=tmp_path
    )
    assert status.code == 0, status.stderr
    assert shown == json.loads(status.stdout)["totals"]["items"] == {"done": ITEMS}
    assert stream["opens"] == 1, "the stream never reconnected"
    assert stream["readyState"] == 2 and stream["ended"] and stream["events"] > ITEMS
    assert rows == 100, "the item table shows one page at a time"


ASK = {
    "command": ["echo", "ran-outside-the-sandbox"],
    "escalate": True,
    "justification": "May I run echo outside the sandbox?",
}
APPROVE = "document.querySelector('[data-approval] button.approve')"


class WorkerAsker:
    """Each fan-out worker asks to run a command outside the sandbox, then reports what it saw."""

    def __init__(self) -> None:
        self.told: list[str] = []

    def __call__(self, request: dict[str, Any]) -> Any:
        done = outputs(request)
        if not done:
            return [{"type": "function_call", "name": "shell", "arguments": json.dumps(ASK)}]
        if len(done) > 1:
            return "reported"
        self.told.append(done[0])
        report = json.dumps({"n": item_of(request)})
        return [{"type": "function_call", "name": "report_result", "arguments": report}]


async def test_a_workers_approval_is_approved_from_the_page_and_the_worker_goes_on(
    tmp_path: Path,
) -> None:
    model = WorkerAsker()
    escalating = ServiceConfig(allowed_roots=(tmp_path,), max_sandbox=SandboxMode.FULL_ACCESS)
    config = ['approval_policy="on-request"', f"shell.approval_timeout_sec={WAIT}"]
    async with (
        open_service(tmp_path, model, service=escalating) as service,
        open_page(tmp_path / "profile") as page,
    ):
        await sign_in(page, service)
        submitted = await service.http.post("/v1/runs", json=service.fanout(1, config=config))
        run_id = submitted.json()["id"]
        await open_run(page, run_id)
        await page.wait_for(APPROVE)
        listed = await page.evaluate("document.getElementById('approval-list').textContent")
        await page.screenshot(artifacts(tmp_path) / "approval.png")
        await page.evaluate(
            "document.querySelector('[data-approval] button.approve').click(); true"
        )
        await page.wait_for("document.body.dataset.stream === 'ended'")
        approvals = (await service.http.get(f"/v1/runs/{run_id}/approvals")).json()["approvals"]
        items = (await service.http.get(f"/v1/runs/{run_id}/items")).json()["items"]
    assert "echo ran-outside-the-sandbox" in listed
    assert [a["state"] for a in approvals] == ["approved"]
    assert "ran-outside-the-sandbox" in model.told[0]
    assert [i["status"] for i in items] == ["done"]


async def test_a_plain_event_source_stops_after_a_finished_runs_end(tmp_path: Path) -> None:
    """No client-side help: the browser's own EventSource reconnects once, gets 204, stops."""
    async with open_service(tmp_path, reporter) as service, open_page(tmp_path / "p") as page:
        await sign_in(page, service)
        run_id = (await service.http.post("/v1/runs", json=service.fanout(2))).json()["id"]
        await page.evaluate(
            f"""window.probe = {{opens: 0, ends: 0}};
            const source = new EventSource('/v1/runs/{run_id}/events');
            source.onopen = () => {{ probe.opens += 1; }};
            source.addEventListener('end', () => {{ probe.ends += 1; }});
            window.probe.source = source; true"""
        )
        await page.wait_for("probe.source.readyState === 2 || probe.opens > 1", LIVE_DEADLINE)
        probe = await page.evaluate("({opens: probe.opens, ends: probe.ends})")
    assert probe == {"opens": 1, "ends": 1}
