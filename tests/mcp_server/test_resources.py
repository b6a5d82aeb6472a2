"""A run's state, results and report as MCP resources, and the notices a subscriber gets when
they change: on a `subscriptions/listen` stream (2026-07-28) and by `resources/subscribe`
(handshake era)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourceUpdated

from ..service._harness import Gate, reporter
from ._harness import WAIT, answer, fanout_args, open_served, refusal

pytestmark = pytest.mark.anyio


def text_of(read: types.ReadResourceResult) -> dict[str, Any]:
    (contents,) = read.contents
    assert isinstance(contents, types.TextResourceContents)
    found: dict[str, Any] = json.loads(contents.text)
    return found


async def test_a_runs_state_results_and_templates_are_resources(tmp_path: Path) -> None:
    async with open_served(tmp_path, reporter) as served:
        args = fanout_args(2, wait_seconds=WAIT)
        run_id = answer(await served.client.call_tool("corral_fanout", args))["run_id"]
        state = text_of(await served.client.read_resource(f"corral://runs/{run_id}"))
        results = text_of(await served.client.read_resource(f"corral://runs/{run_id}/results"))
        listed = await served.client.list_resources()
        templates = await served.client.list_resource_templates()
        no_report = await served.client.call_tool("corral_status", {"run_id": "nope"})
    assert state["status"] == "done" and state["has_report"] is False
    assert [r["result"] for r in results["results"]] == [{"n": 0}, {"n": 10}]
    assert [r.uri for r in listed.resources] == [f"corral://runs/{run_id}"]
    assert [t.uri_template for t in templates.resource_templates] == [
        "corral://runs/{run_id}",
        "corral://runs/{run_id}/results",
        "corral://runs/{run_id}/report",
    ]
    assert "no run nope" in refusal(no_report)


async def test_a_listener_hears_that_a_runs_results_changed(tmp_path: Path) -> None:
    gate = Gate()
    async with open_served(tmp_path, gate) as served:
        run_id = answer(await served.client.call_tool("corral_fanout", fanout_args(1)))["run_id"]
        uri = f"corral://runs/{run_id}/results"
        heard: list[str] = []
        with anyio.fail_after(WAIT):
            async with served.client.listen(resource_subscriptions=[uri]) as subscription:
                gate.release()
                async for event in subscription:
                    assert isinstance(event, ResourceUpdated)
                    heard.append(event.uri)
                    if text_of(await served.client.read_resource(uri))["results"][0]["result"]:
                        break
    assert set(heard) == {uri}


async def test_a_handshake_era_subscriber_is_sent_resource_updates(tmp_path: Path) -> None:
    updated: list[str] = []
    finished = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(message.params.uri)
            if message.params.uri.endswith("/report"):
                finished.set()

    gate = Gate()
    options = {"mode": "legacy", "message_handler": on_message}
    async with open_served(tmp_path, gate, client=options) as served:
        run_id = answer(await served.client.call_tool("corral_fanout", fanout_args(1)))["run_id"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated in 2026-07-28, which this is not
            for part in ("", "/results", "/report"):
                await served.client.subscribe_resource(f"corral://runs/{run_id}{part}")
        gate.release()
        with anyio.fail_after(WAIT):
            await finished.wait()
    assert f"corral://runs/{run_id}/results" in updated
