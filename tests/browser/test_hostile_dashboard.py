"""A model that writes markup attacks the people watching its run in the dashboard.

Everything a run produces (tool arguments, approval reasons, results, errors) is the model's
text. Shown in a real chromium, none of it may run as script or become markup: the page puts it
in as text, and its Content-Security-Policy refuses inline script even if a bug let it through.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.agents import ServiceConfig
from corral.observability import CAPTURE_ENV
from corral.tools import SandboxMode
from tests.service._harness import WAIT, item_of, open_service, outputs

from ._cdp import open_page
from .test_dashboard import open_run, sign_in

pytestmark = [pytest.mark.hostile, pytest.mark.anyio, pytest.mark.timeout(120)]

PAYLOADS = [
    '<img src=x onerror="window.pwned=1">',
    "<svg onload=window.pwned=2></svg>",
    '"><script>window.pwned=3</script>',
    "<iframe srcdoc='<script>parent.pwned=4</script>'></iframe>",
]
CAPTURE = {CAPTURE_ENV: "true"}
"""The inspector shows the calls' content, so the markup reaches the page."""
MARKUP = "#run-view img, #run-view svg, #run-view script, #run-view iframe"


class MarkupWriter:
    """Asks for an escalated command whose text and reason are `payload`; then fails its item
    with `payload` as the error, by reporting a result the schema refuses."""

    def __init__(self, payload: str) -> None:
        self.payload = payload

    def __call__(self, request: dict[str, Any]) -> Any:
        done = outputs(request)
        if not done:
            ask = {
                "command": ["echo", self.payload],
                "escalate": True,
                "justification": self.payload,
            }
            return [{"type": "function_call", "name": "shell", "arguments": json.dumps(ask)}]
        if len(done) == 1:
            report = json.dumps({"n": item_of(request), "note": self.payload})
            return [{"type": "function_call", "name": "report_result", "arguments": report}]
        return self.payload


@pytest.mark.parametrize("payload", PAYLOADS)
async def test_markup_from_the_model_is_shown_as_text_and_never_runs(
    payload: str, tmp_path: Path
) -> None:
    escalating = ServiceConfig(allowed_roots=(tmp_path,), max_sandbox=SandboxMode.FULL_ACCESS)
    config = ['approval_policy="on-request"', f"shell.approval_timeout_sec={WAIT}"]
    async with (
        open_service(tmp_path, MarkupWriter(payload), env=CAPTURE, service=escalating) as service,
        open_page(tmp_path / "profile") as page,
    ):
        await sign_in(page, service)
        run_id = (
            await service.http.post("/v1/runs", json=service.fanout(1, config=config))
        ).json()["id"]
        await open_run(page, run_id)
        deny = "document.querySelector('[data-approval] button.deny')"
        await page.wait_for(f"{deny} && document.querySelector('[data-call]')")
        await page.evaluate("document.querySelector('[data-call]').click(); true")
        listed = await page.evaluate("document.getElementById('approval-list').textContent")
        arguments = await page.evaluate("document.getElementById('inspector-args').textContent")
        await page.evaluate(f"{deny}.click(); true")
        await page.wait_for("document.body.dataset.stream === 'ended'")
        table = await page.evaluate("document.getElementById('items').textContent")
        pwned = await page.evaluate("window.pwned === undefined ? null : window.pwned")
        markup = await page.evaluate(f"document.querySelectorAll({json.dumps(MARKUP)}).length")
    assert pwned is None
    assert markup == 0
    assert payload in listed, "the reason is shown, as text"
    assert json.dumps(payload)[1:-1] in arguments, "the call's arguments are shown, as text"
    assert table.strip()
