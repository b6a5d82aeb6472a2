"""Run-wide budgets on Temporal (`[budgets] run_*`), kept by the run's workflow: a fan-out
whose cost runs out, a supervisor and its workers out of tokens, and a run out of time while
its model stalls. Each runs on the time-skipping server with a corral worker in this process.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import AgentStatus, CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, FanoutJob, RunSetup
from corral.orchestrator.supervisor import collab_tool_providers
from corral.orchestrator.temporal import ActivityPolicy, TemporalExecutor, TemporalSettings

from ._harness import WAIT, call, in_process_worker, outputs, time_skipping, user_texts

pytestmark = pytest.mark.anyio

POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
MODEL = "priced-model"
_ITEM = re.compile(r"Item (\d+):")


def spent(tokens: int, result: Any) -> dict[str, Any]:
    """`result` as the model's answer, billed as `tokens` input tokens."""
    output = [{"type": "message", "content": result}] if isinstance(result, str) else result
    usage = {"input_tokens": tokens, "output_tokens": 0, "cached_tokens": 0}
    return {"output": output, "usage": {**usage, "reasoning_tokens": 0}}


def config_for(home: Path, base_url: str, **budgets: Any) -> CorralConfig:
    return CorralConfig(
        home=home,
        base_url=base_url,
        model=MODEL,
        prices={MODEL: {"input_per_mtok": 1.0, "output_per_mtok": 1.0}},
        budgets=budgets,
    )


def item_step(request: dict[str, Any]) -> Any:
    """Each item: a shell call, then its report, then a last line; a million tokens ($1) each."""
    item = int(_ITEM.findall(json.dumps(request["input"]))[-1])
    done = outputs(request)
    if not done:
        return spent(10**6, [call("sh", "shell", {"command": f"echo {item}"})])
    if "report" not in done:
        return spent(10**6, [call("report", "report_result", {"n": item})])
    return spent(10**6, f"item {item} reported")


async def test_a_fanout_out_of_money_stops_its_running_items_and_never_starts_the_rest(
    tmp_path: Path,
) -> None:
    home, cwd = tmp_path / "home", tmp_path / "ws"
    cwd.mkdir()
    async with serve_model_server(item_step) as model, time_skipping() as env:
        config = config_for(home, model.base_url, run_max_cost_usd=2.0)
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                done = await ex.run_fanout(
                    config,
                    FanoutJob(
                        items=tuple([{"n": n} for n in range(4)]),
                        template="Item {n}: report n.",
                        result_schema=SCHEMA,
                        cwd=cwd,
                        concurrency=2,
                        run_id="run-costly",
                    ),
                )
        asked = {
            int(_ITEM.findall(json.dumps(r["normalised"]["input"]))[-1]) for r in model.requests
        }
    reason = "run budget exceeded: 2 of 2 USD used"
    items = done.outcome.items
    assert [(i.status, i.error) for i in items[:2]] == [
        ("failed", f"the worker ended budget_exceeded: {reason}")
    ] * 2
    assert [(i.status, i.error) for i in items[2:]] == [("failed", reason)] * 2
    assert asked == {0, 1}, "the items not started sent no model request"
    async with open_sqlite_store(home / "journal.sqlite") as store:
        agents = await store.list_agents("run-costly")
        run = await store.get_run("run-costly")
        journaled = await store.items("run-costly")
    assert {a.status for a in agents} == {"budget_exceeded"} and len(agents) == 2
    assert run is not None and run.status == "failed"
    assert [(r.status, r.error) for r in journaled[2:]] == [("failed", reason)] * 2


def is_worker(request: dict[str, Any]) -> bool:
    return any(text.startswith("<subagent_context>") for text in user_texts(request))


def supervise(request: dict[str, Any]) -> Any:
    """The supervisor (free) spawns two workers and waits; each worker's first answer costs
    the run's whole token budget."""
    if is_worker(request):
        return spent(1000, [call("sh", "shell", {"command": "echo working"})])
    done = outputs(request)
    if not done:
        spawns = [call(f"spawn-{n}", "spawn_agent", {"message": f"task {n}"}) for n in "ab"]
        return spent(0, spawns)
    ids = [json.loads(done[f"spawn-{n}"])["agent_id"] for n in "ab"]
    if len(done) == 2:
        return spent(0, [call("wait", "wait_agent", {"targets": ids, "timeout_ms": 20_000})])
    return spent(0, "all done")


async def test_a_supervisor_out_of_tokens_is_stopped_with_its_workers(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "repo"
    (cwd / ".git").mkdir(parents=True)
    setup = RunSetup(tool_providers=collab_tool_providers(), env={})
    async with serve_model_server(supervise) as model, time_skipping() as env:
        config = config_for(home, model.base_url, run_max_tokens=1000)
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config,
                    ExecJob(task="split it", cwd=cwd, run_id="run-tokens", role="supervisor"),
                    setup,
                )
        worker_requests = [r for r in model.requests if is_worker(r["normalised"])]
    assert outcome.finish.status is AgentStatus.BUDGET_EXCEEDED
    assert outcome.finish.error is not None
    assert re.fullmatch(r"run budget exceeded: \d+ of 1000 tokens used", outcome.finish.error)
    assert len(worker_requests) == 2, "each worker was stopped after its first answer"
    async with open_sqlite_store(home / "journal.sqlite") as store:
        agents = await store.list_agents("run-tokens")
        stops = [
            [
                e.payload["reason"]
                for e in await store.events(a.agent_id)
                if e.kind == "budget_exceeded"
            ]
            for a in agents
        ]
    assert len(agents) == 3
    assert {a.status for a in agents} == {"budget_exceeded"}
    assert stops == [[outcome.finish.error]] * 3, "every agent journaled the run's reason"
    assert not (cwd / "working").exists()


def escalate_once(request: dict[str, Any]) -> Any:
    """An escalated command (held for an approval nobody gives), then a last line."""
    if outputs(request):
        return "answered"
    args = {"command": "echo a > a.txt", "escalate": True, "justification": "may I?"}
    return [call("esc-a", "shell", args)]


async def test_a_run_out_of_wall_time_ends_while_its_agent_waits(tmp_path: Path) -> None:
    # The test server skips no time while an activity runs (a stalled model call), so the
    # agent waits in its workflow instead: for an approval due in two hours.
    home, cwd = tmp_path / "home", tmp_path / "ws"
    cwd.mkdir()
    async with serve_model_server(escalate_once) as model, time_skipping() as env:
        config = CorralConfig(
            home=home,
            base_url=model.base_url,
            approval_policy="on-request",
            shell={"approval_timeout_sec": 7200.0},
            budgets={"run_max_wall_time_s": 3600.0},
        )
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config, ExecJob(task="write a", cwd=cwd, run_id="run-slow"), RunSetup(env={})
                )
        assert len(model.requests) == 1, "the model was not asked again"
    assert outcome.finish.status is AgentStatus.BUDGET_EXCEEDED
    assert outcome.finish.error == "run wall-time budget exceeded: 3600 s"
    assert not (cwd / "a.txt").exists()
