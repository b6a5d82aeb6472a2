"""Run-wide budgets (`[budgets] run_*`) on each executor: a fan-out whose money runs out, a
supervisor and its workers out of tokens, and a run out of wall time while its agent waits."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import AgentStatus, CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, FanoutJob, SingleOutcome
from corral.orchestrator.supervisor import collab_tool_providers
from tests._scripted import call, is_worker, outputs, spent

from ._seam import WAIT, Seam

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
MODEL = "priced-model"
_ITEM = re.compile(r"Item (\d+):")


def config_for(home: Path, base_url: str, **budgets: Any) -> CorralConfig:
    return CorralConfig(
        home=home,
        base_url=base_url,
        model=MODEL,
        prices={MODEL: {"input_per_mtok": 1.0, "output_per_mtok": 1.0}},
        budgets=budgets,
    )


def item_of(request: dict[str, Any]) -> int:
    return int(_ITEM.findall(json.dumps(request["input"]))[-1])


def item_step(request: dict[str, Any]) -> Any:
    """Each item: a shell call, then its report, then a last line; a million tokens ($1) each."""
    item, done = item_of(request), outputs(request)
    if not done:
        return spent(10**6, [call("sh", "shell", {"command": f"echo {item}"})])
    if "report" not in done:
        return spent(10**6, [call("report", "report_result", {"n": item})])
    return spent(10**6, f"item {item} reported")


async def test_a_fanout_out_of_money_stops_its_running_items_and_never_starts_the_rest(
    executor: Seam, tmp_path: Path
) -> None:
    home, cwd, run_id = tmp_path / "home", tmp_path / "ws", executor.run_id("run-costly")
    cwd.mkdir()
    job = FanoutJob(
        items=tuple({"n": n} for n in range(4)),
        template="Item {n}: report n.",
        result_schema=SCHEMA,
        cwd=cwd,
        concurrency=2,
        run_id=run_id,
    )
    async with serve_model_server(item_step) as model:
        config = config_for(home, model.base_url, run_max_cost_usd=2.0)
        async with executor.serving(config):
            with anyio.fail_after(WAIT):
                outcome = await executor.run(job, executor.setup(run_id), config)
        asked = {item_of(r["normalised"]) for r in model.requests}
    reason = "run budget exceeded: 2 of 2 USD used"
    items = outcome.items
    assert [(i.status, i.error) for i in items[:2]] == [
        ("failed", f"the worker ended budget_exceeded: {reason}")
    ] * 2
    assert [(i.status, i.error) for i in items[2:]] == [("failed", reason)] * 2
    assert asked == {0, 1}, "the items not started sent no model request"
    async with open_sqlite_store(home / "journal.sqlite") as store:
        agents = await store.list_agents(run_id)
        run = await store.get_run(run_id)
        journaled = await store.items(run_id)
    assert {a.status for a in agents} == {"budget_exceeded"} and len(agents) == 2
    assert run is not None and run.status == "failed"
    assert [(r.status, r.error) for r in journaled[2:]] == [("failed", reason)] * 2


class Supervise:
    """The supervisor (free) spawns two workers and waits; each worker's first answer costs
    the run's whole token budget. A worker's answer is held until the supervisor has asked
    again with both spawns answered, so that both spawns come before the budget runs out
    (otherwise the second spawn may, rightly, be refused: which comes first is a race)."""

    def __init__(self) -> None:
        self.both_spawned = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if is_worker(request):
            with anyio.fail_after(WAIT):
                await self.both_spawned.wait()
            return spent(1000, [call("sh", "shell", {"command": "echo working"})])
        done = outputs(request)
        if not done:
            spawns = [call(f"spawn-{n}", "spawn_agent", {"message": f"task {n}"}) for n in "ab"]
            return spent(0, spawns)
        ids = [json.loads(done[f"spawn-{n}"])["agent_id"] for n in "ab"]
        if len(done) == 2:
            self.both_spawned.set()
            return spent(0, [call("wait", "wait_agent", {"targets": ids, "timeout_ms": 20_000})])
        return spent(0, "all done")


@dataclass(frozen=True)
class OutOfTokens:
    outcome: SingleOutcome
    worker_requests: int
    statuses: list[str]
    stops: list[list[str]]
    """Each agent's journaled `budget_exceeded` reasons."""


async def run_out_of_tokens(executor: Seam, tmp_path: Path) -> OutOfTokens:
    home, cwd, run_id = tmp_path / "home", tmp_path / "repo", executor.run_id("run-tokens")
    (cwd / ".git").mkdir(parents=True)
    job = ExecJob(task="split it", cwd=cwd, run_id=run_id, role="supervisor")
    async with serve_model_server(Supervise()) as model:
        config = config_for(home, model.base_url, run_max_tokens=1000)
        async with executor.serving(config):
            setup = executor.setup(run_id, tool_providers=collab_tool_providers())
            with anyio.fail_after(WAIT):
                outcome = await executor.run(job, setup, config)
        worker_requests = [r for r in model.requests if is_worker(r["normalised"])]
    assert not (cwd / "working").exists()
    async with open_sqlite_store(home / "journal.sqlite") as store:
        agents = await store.list_agents(run_id)
        stops = [
            [
                e.payload["reason"]
                for e in await store.events(a.agent_id)
                if e.kind == "budget_exceeded"
            ]
            for a in agents
        ]
    return OutOfTokens(outcome, len(worker_requests), [a.status for a in agents], stops)


async def test_a_supervisor_out_of_tokens_is_stopped_with_its_workers(
    executor: Seam, tmp_path: Path
) -> None:
    out = await run_out_of_tokens(executor, tmp_path)
    assert out.outcome.finish.status is AgentStatus.BUDGET_EXCEEDED
    assert out.outcome.finish.error is not None
    assert re.fullmatch(r"run budget exceeded: \d+ of 1000 tokens used", out.outcome.finish.error)
    assert out.worker_requests in (1, 2), "no worker was asked twice"
    assert out.statuses == ["budget_exceeded"] * 3
    assert all(out.outcome.finish.error in reasons for reasons in out.stops)


async def test_each_worker_out_of_tokens_answers_once_and_each_agent_says_why_once(
    executor: Seam, tmp_path: Path
) -> None:
    out = await run_out_of_tokens(executor, tmp_path)
    # Locally a worker whose first request comes after the budget ran out is refused before
    # it is sent; on Temporal it learns of the tally only by charging it: at most one each.
    assert out.worker_requests in (1, 2), "each worker was stopped after its first answer"
    assert out.stops == [[out.outcome.finish.error]] * 3, "every agent journaled the reason once"


async def test_a_worker_queued_when_the_run_runs_out_of_tokens_never_starts(
    executor: Seam, tmp_path: Path
) -> None:
    home, cwd, run_id = tmp_path / "home", tmp_path / "repo", executor.run_id("run-queued-out")
    (cwd / ".git").mkdir(parents=True)
    job = ExecJob(task="split it", cwd=cwd, run_id=run_id, role="supervisor")
    async with serve_model_server(Supervise()) as model:
        config = config_for(home, model.base_url, run_max_tokens=1000)
        config = config.model_copy(
            update={"agents": config.agents.model_copy(update={"max_threads": 1})}
        )
        async with executor.serving(config):
            setup = executor.setup(run_id, tool_providers=collab_tool_providers())
            with anyio.fail_after(WAIT):
                outcome = await executor.run(job, setup, config)
        worker_requests = [r for r in model.requests if is_worker(r["normalised"])]
    async with open_sqlite_store(home / "journal.sqlite") as store:
        agents = await store.list_agents(run_id)
    reason = outcome.finish.error
    assert reason is not None and reason.startswith("run budget exceeded")
    assert len(worker_requests) == 1, "the queued worker never asked the model"
    # Sorted: on Temporal a worker is journaled when its workflow starts, after the queued one.
    assert sorted((a.status, a.error) for a in agents[1:]) == [
        ("budget_exceeded", f"never started: {reason}"),
        ("budget_exceeded", reason),
    ]


def escalate_once(request: dict[str, Any]) -> Any:
    """An escalated command (held for an approval nobody gives), then a last line."""
    if outputs(request):
        return "answered"
    args = {"command": "echo a > a.txt", "escalate": True, "justification": "may I?"}
    return [call("esc-a", "shell", args)]


async def test_a_run_out_of_wall_time_ends_while_its_agent_waits(
    executor: Seam, tmp_path: Path
) -> None:
    # The agent waits for an approval due after the run's time is up (Temporal's test server
    # skips no time while an activity runs, so the wait is not on a stalled model call).
    home, cwd, run_id = tmp_path / "home", tmp_path / "ws", executor.run_id("run-slow")
    cwd.mkdir()
    long_s = executor.long_s
    async with serve_model_server(escalate_once) as model:
        config = CorralConfig(
            home=home,
            base_url=model.base_url,
            approval_policy="on-request",
            shell={"approval_timeout_sec": 2 * long_s},
            budgets={"run_max_wall_time_s": long_s},
        )
        async with executor.serving(config):
            with anyio.fail_after(WAIT):
                outcome = await executor.run(
                    ExecJob(task="write a", cwd=cwd, run_id=run_id), executor.setup(run_id), config
                )
        assert len(model.requests) == 1, "the model was not asked again"
    assert outcome.finish.status is AgentStatus.BUDGET_EXCEEDED
    assert outcome.finish.error == f"run wall-time budget exceeded: {long_s:g} s"
    assert not (cwd / "a.txt").exists()
