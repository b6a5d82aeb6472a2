"""The dashboard's run list: newest first, filtered by status, kind and text, with the totals
`corral status` shows, and the dashboard's own files served from the package."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.service import CorralClient

from ._harness import TOKEN, WAIT, open_service, reporter

pytestmark = pytest.mark.anyio


async def finish(client: CorralClient, request: dict[str, Any]) -> str:
    run_id = str((await client.submit(request))["id"])
    with anyio.fail_after(WAIT):
        async for _ in client.events(run_id):
            pass
    return run_id


async def test_the_run_list_is_newest_first_filtered_and_totalled(tmp_path: Path) -> None:
    async with (
        open_service(tmp_path, reporter) as service,
        CorralClient(service.url, TOKEN) as client,
    ):
        first = await finish(client, service.fanout(1))
        second = await finish(client, service.fanout(3))
        listed = (await service.http.get("/v1/dashboard/runs")).json()
        by_kind = (await service.http.get("/v1/dashboard/runs?kind=exec")).json()
        by_text = (await service.http.get(f"/v1/dashboard/runs?q={first[-6:].upper()}")).json()
        paged = (await service.http.get("/v1/dashboard/runs?limit=1&offset=1")).json()
        again = (await service.http.get("/v1/dashboard/runs?status=done")).json()
        bad = await service.http.get("/v1/dashboard/runs?limit=many")
    assert [r["id"] for r in listed["runs"]] == [second, first] and listed["total"] == 2
    newest = listed["runs"][0]
    assert newest["items"] == {"done": 3} and newest["agents"] == {"completed": 3}
    assert newest["kind"] == "fanout" and newest["status"] == "done"
    assert newest["tokens"] > 0 and newest["cost_usd"] > 0 and newest["duration_s"] >= 0
    assert by_kind == {"runs": [], "total": 0}
    assert [r["id"] for r in by_text["runs"]] == [first]
    assert [r["id"] for r in paged["runs"]] == [first] and paged["total"] == 2
    assert again["runs"] == listed["runs"], "finished runs' rows are kept as they were"
    assert bad.status_code == 422


async def test_the_dashboard_is_served_from_the_package_with_a_strict_policy(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service:
        page = await service.http.get("/")
        script = await service.http.get("/static/dashboard.js")
        missing = await service.http.get("/static/..%2F_app.py")
        signin = await service.http.get("/signin", headers={"Authorization": ""})
    assert page.status_code == 200 and '<script src="/static/dashboard.js"' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    assert script.headers["content-type"].startswith("text/javascript")
    assert "textContent" in script.text and "innerHTML" not in script.text
    assert missing.status_code == 404
    assert signin.status_code == 200 and 'name="token"' in signin.text
