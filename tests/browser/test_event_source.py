"""A run's event stream read by the browser's own `EventSource` in headless chromium, signed in
with the session cookie: every event once, in order, and a stream that stays over once it ended.

The page holds a bare `EventSource` (not the dashboard's code), so what is checked is what any
page of the same origin gets from the server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.service._harness import WAIT, Gate, Harness, open_service, reporter

from ._cdp import Page, open_page
from .test_dashboard import sign_in

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]

LISTEN = """(() => {{
  window.seen = []; window.errors = 0;
  const source = new EventSource({url});
  for (const name of {names}) {{
    source.addEventListener(name, (e) => seen.push([e.type, e.lastEventId, JSON.parse(e.data)]));
  }}
  source.onmessage = (e) => seen.push(["message", e.lastEventId, e.data]);
  source.onerror = () => {{ errors += 1; }};
  window.source = source;
  return true;
}})()"""


async def event_names(service: Harness, run_id: str) -> list[str]:
    """The names of the run's events, read over HTTP, so the page listens to each one."""
    names = {"metadata", "end", "error"}
    with anyio.fail_after(WAIT):
        async with service.http.stream("GET", f"/v1/runs/{run_id}/events") as response:
            async for line in response.aiter_lines():
                names.update([line.removeprefix("event: ")] if line.startswith("event: ") else [])
                if line == "event: end":
                    break
    return sorted(names)


async def listen(page: Page, run_id: str, names: list[str]) -> None:
    url = json.dumps(f"/v1/runs/{run_id}/events")
    await page.evaluate(LISTEN.format(url=url, names=json.dumps(names)))


async def test_an_event_source_left_open_after_the_end_gets_each_event_once_then_stops(
    tmp_path: Path,
) -> None:
    async with open_service(tmp_path, reporter) as service, open_page(tmp_path / "p") as page:
        run_id = (await service.http.post("/v1/runs", json=service.fanout(2))).json()["id"]
        names = await event_names(service, run_id)
        await sign_in(page, service)
        await listen(page, run_id, names)
        # The server closes after `end`; the browser reconnects with the last id and gets 204.
        await page.wait_for("source.readyState === EventSource.CLOSED", WAIT)
        seen: list[list[Any]] = await page.evaluate("seen")
    kinds = [kind for kind, _, _ in seen]
    ids = [int(event_id) for kind, event_id, _ in seen if kind not in ("metadata", "end")]
    assert kinds[0] == "metadata" and kinds.count("metadata") == 1
    assert kinds[-1] == "end" and kinds.count("end") == 1 and seen[-1][2]["status"] == "done"
    assert ids == list(range(1, len(ids) + 1)), "each event once, in order"
    assert "message" not in kinds, "no frame reaches the page as a nameless message"


async def test_an_event_source_on_a_live_run_sees_it_through_to_the_end(tmp_path: Path) -> None:
    gate = Gate(held={1})
    async with open_service(tmp_path, gate) as service, open_page(tmp_path / "p") as page:
        run_id = (await service.http.post("/v1/runs", json=service.fanout(2))).json()["id"]
        try:
            await sign_in(page, service)
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
            names = ["metadata", "end", "error", "agent_started", "item_finished"]
            await listen(page, run_id, names)
            await page.wait_for("seen.filter((e) => e[0] === 'item_finished').length === 1")
            live = await page.evaluate("source.readyState")
        finally:
            gate.release()
        await page.wait_for("seen.some((e) => e[0] === 'end')", WAIT)
        seen: list[list[Any]] = await page.evaluate("seen")
    assert live == 1, "the stream stays open while the run waits"
    assert [kind for kind, _, _ in seen].count("item_finished") == 2
    assert seen[-1][0] == "end" and seen[-1][2]["status"] == "done"
