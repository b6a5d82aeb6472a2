"""A fan-out killed at random moments and resumed, and one killed while `report_result` ran.

The random kills use `benchmarks.kill_resume` (its docstring says what "exactly once" witnesses)
at a size that fits the suite; the benchmark runs 240 items and 5 kills. The `report_result`
case is built exactly: the run is killed just after the call, and the journal is then put back
to the state a kill between the call's ledger start and its end leaves.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from benchmarks.kill_resume import (
    KillPlan,
    failed_calls,
    kill_and_resume,
    prepare,
    results,
    witness,
)
from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_argv, corral_env, run_corral

pytestmark = pytest.mark.anyio
WAIT = 30.0
TARGET = 1
_ITEM = re.compile(r"Item (\d+):")


@pytest.mark.slow
async def test_random_kills_alternating_fanout_and_resume_leave_every_item_done_once(
    tmp_path: Path,
) -> None:
    items = 40
    workspace, home = tmp_path / "ws", tmp_path / "home"
    prepare(workspace, items)
    plan = KillPlan.seeded(seed=7, items=items, kills=2)
    outcome = await kill_and_resume(workspace, home, plan, concurrency=6, latency_ms=20)
    assert outcome.final_code == 0, outcome.final_stderr
    assert len(outcome.kills) == 2
    assert failed_calls(home) == [], "no tool call failed other than by a kill"
    assert results(workspace) == [(n, "done", {"n": n}) for n in range(items)]
    assert witness(workspace) == list(range(items)), "every item's shell call took effect once"
    assert outcome.unknown_reports == 0, "no report_result reached the model as unknown"


def tool_outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


class StallAfterReport:
    """Each item reports its number, then answers; the target's answer stalls until killed."""

    def __init__(self) -> None:
        self.stalled = anyio.Event()
        self.release = anyio.Event()
        self.reports: dict[int, int] = {}
        self.after_resume: list[list[str]] = []

    async def __call__(self, request: dict[str, Any]) -> Any:
        n = int(_ITEM.findall(json.dumps(request["input"]))[-1])
        done = tool_outputs(request)
        if n == TARGET and self.stalled.is_set():
            self.after_resume.append(done)
        if not done:
            self.reports[n] = self.reports.get(n, 0) + 1
            arguments = json.dumps({"n": n})
            return [{"type": "function_call", "name": "report_result", "arguments": arguments}]
        if n == TARGET and not self.stalled.is_set():
            self.stalled.set()
            await self.release.wait()
            return "too late: the client is gone"
        return f"item {n} reported"


def unfinish_report(journal: Path, run_id: str, index: int) -> None:
    """Turn the item's journaled `report_result` back into a call that started and never
    ended: its result event removed, its ledger entry started only."""
    with sqlite3.connect(journal) as conn:
        (agent,) = conn.execute(
            'SELECT agent_id FROM items WHERE run_id = ? AND "index" = ?', (run_id, index)
        ).fetchone()
        conn.execute(
            "DELETE FROM events WHERE agent_id = ? AND seq = "
            "(SELECT MAX(seq) FROM events WHERE agent_id = ? AND kind = 'tool_result')",
            (agent, agent),
        )
        changed = conn.execute(
            "UPDATE ledger SET state = 'started', output = NULL, success = NULL, "
            "finished_at = NULL WHERE agent_id = ? AND tool = 'report_result'",
            (agent,),
        ).rowcount
    assert changed == 1


async def test_a_report_result_in_flight_at_a_kill_is_judged_from_its_arguments(
    tmp_path: Path,
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    prepare(workspace, 3)
    policy = StallAfterReport()
    argv = corral_argv(
        *("fanout", "--run-id", "run-r", "--items", "items.jsonl", "--schema", "schema.json"),
        *("--template", "Item {n}: report {n}.", "--concurrency", "1"),
    )
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        process = await anyio.open_process(argv, env=env, cwd=workspace, start_new_session=True)
        with anyio.fail_after(WAIT):
            await policy.stalled.wait()
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        policy.release.set()
        await anyio.to_thread.run_sync(unfinish_report, home / "journal.sqlite", "run-r", TARGET)
        result = await run_corral(["resume", "run-r"], env=env, cwd=workspace)
    assert result.code == 0, result.stderr
    assert results(workspace) == [(n, "done", {"n": n}) for n in range(3)]
    assert policy.reports == {0: 1, 1: 1, 2: 1}, "the model was never asked to report again"
    assert policy.after_resume == [["result recorded"]], "judged again, not reported unknown"
