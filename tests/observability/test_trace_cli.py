"""`corral trace RUN` prints the run's agent tree from the journal, totals as `corral status`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.agents import CorralConfig, ModelPrice
from corral.orchestrator.fanout import run_fanout
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate
from tests._fanout import SCHEMA
from tests.e2e._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio


def reporter(request: dict[str, Any]) -> Any:
    if any(i.get("type") == "function_call_output" for i in request["input"]):
        return "reported"
    args = json.dumps({"n": 1})
    return [{"type": "function_call", "name": "report_result", "arguments": args}]


async def test_trace_prints_each_worker_with_turns_tokens_and_the_status_totals(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    prices = {"gpt-5": ModelPrice(input_per_mtok=1.25, output_per_mtok=10.0)}
    async with serve_model_server(reporter) as server:
        config = CorralConfig(home=home, base_url=server.base_url, model="gpt-5", prices=prices)
        await run_fanout(
            config,
            FanoutJob(
                items=tuple([{"n": 1}, {"n": 2}]),
                template="Item {n}: report.",
                result_schema=SCHEMA,
                cwd=tmp_path,
                run_id="run-tree",
                worker=WorkerTemplate(tools=()),
            ),
            RunSetup(env={}),
        )
    env = corral_env(home)
    trace = await run_corral(["trace", "run-tree"], env=env, cwd=tmp_path)
    status = await run_corral(["status", "run-tree"], env=env, cwd=tmp_path)
    as_json = await run_corral(["trace", "run-tree", "--json"], env=env, cwd=tmp_path)
    status_json = await run_corral(["status", "run-tree", "--json"], env=env, cwd=tmp_path)
    assert (trace.code, status.code, as_json.code) == (0, 0, 0), trace.stderr + as_json.stderr
    lines = trace.stdout.splitlines()
    assert lines[:2] == status.stdout.splitlines()[:2]
    assert "cost $0.0" in lines[1]
    workers = sorted(line for line in lines[2:])
    assert len(workers) == 2
    assert workers[0].startswith("item 0 (agent-") and "completed" in workers[0]
    assert "2 turns" in workers[0] and workers[1].startswith("item 1 (agent-")
    data = json.loads(as_json.stdout)
    assert data["totals"] == json.loads(status_json.stdout)["totals"]
    nodes = data["agents"]
    assert sum(n["input_tokens"] for n in nodes) == data["totals"]["input_tokens"]
    # Each cost is shown to six decimals, so the shown parts may miss the shown total by one
    # millionth each (how many tokens a prompt takes depends on the test's folder name).
    rounding = 1e-6 * len(nodes)
    assert sum(n["cost_usd"] for n in nodes) == pytest.approx(
        data["totals"]["cost_usd"], abs=rounding
    )
    assert all(n["turns"] == 2 and n["children"] == [] for n in nodes)


async def test_trace_of_an_unknown_run_says_so_without_a_traceback(tmp_path: Path) -> None:
    result = await run_corral(["trace", "run-nope"], env=corral_env(tmp_path / "h"), cwd=tmp_path)
    assert result.code != 0 and "run-nope" in result.stderr
    assert "Traceback" not in result.stderr
