"""Review, triage, exec and cancel over MCP: the pipelines' own scripted models, the report read
as a resource, and a run cancelled while its workers wait."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from corral.agents import open_sqlite_store
from tests._git import git, write

from ..e2e import test_review as review_e2e
from ..e2e import test_triage as triage_e2e
from ..service._harness import Gate
from ..service.test_pipelines import LABELS, shop_repo
from ._harness import WAIT, answer, fanout_args, open_served
from .test_resources import text_of

pytestmark = pytest.mark.anyio


async def test_a_triage_over_mcp_keeps_its_report_as_a_resource(tmp_path: Path) -> None:
    async with open_served(tmp_path, triage_e2e.triager) as served:
        args = {"issues": triage_e2e.ISSUES, "labels": LABELS, "wait_seconds": WAIT}
        state = answer(await served.client.call_tool("corral_triage", args))
        read = await served.client.read_resource(state["links"]["report"])
    report = text_of(read)["report"]
    assert state["status"] == "done" and state["has_report"] is True
    assert [i["number"] for i in report["json"]["issues"]] == [11, 12, 13, 14]


async def test_a_review_of_a_patch_over_mcp_reports_its_finding(tmp_path: Path) -> None:
    repo = shop_repo(tmp_path)
    write(repo, {"shop/cart.py": review_e2e.CART_HEAD})
    args = {"repo": "shop-repo", "patch": git(repo, "diff") + "\n", "wait_seconds": WAIT}
    async with open_served(tmp_path, review_e2e.reviewer) as served:
        state = answer(await served.client.call_tool("corral_review", args))
        report = text_of(await served.client.read_resource(state["links"]["report"]))["report"]
    assert report["summary"]["findings"] == 1
    assert "Off-by-one reads past the end" in report["markdown"]


async def test_an_exec_over_mcp_runs_one_agent_to_its_answer(tmp_path: Path) -> None:
    async with open_served(tmp_path, lambda request: "all clear") as served:
        args = {"task": "check the build", "wait_seconds": WAIT, "sandbox": "read-only"}
        state = answer(await served.client.call_tool("corral_exec", args))
    assert (state["kind"], state["status"], state["answer"]) == ("exec", "completed", "all clear")


async def test_cancel_stops_a_run_its_client_started(tmp_path: Path) -> None:
    gate = Gate(expect=2)
    async with open_served(tmp_path, gate) as served:
        try:
            started = await served.client.call_tool("corral_fanout", fanout_args(2))
            run_id = answer(started)["run_id"]
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
            cancelled = answer(await served.client.call_tool("corral_cancel", {"run_id": run_id}))
            with anyio.fail_after(WAIT):
                status = answer(
                    await served.client.call_tool(
                        "corral_status", {"run_id": run_id, "wait_seconds": WAIT}
                    )
                )
        finally:
            gate.release()
        runs = answer(await served.client.call_tool("corral_runs", {"status": "cancelled"}))
    assert cancelled["status"] == "cancelled" and status["status"] == "cancelled"
    assert [run["run_id"] for run in runs["runs"]] == [run_id]
    assert status["items"].get("done", 0) == 0


async def test_a_run_left_unfinished_when_the_server_stops_is_interrupted_in_the_journal(
    tmp_path: Path,
) -> None:
    gate = Gate()
    try:
        async with open_served(tmp_path, gate) as served:
            run_id = answer(await served.client.call_tool("corral_fanout", fanout_args(1)))[
                "run_id"
            ]
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
    finally:
        gate.release()
    async with open_sqlite_store(tmp_path / "home" / "journal.sqlite") as store:
        record = await store.get_run(run_id)
    assert record is not None and record.status == "interrupted"
