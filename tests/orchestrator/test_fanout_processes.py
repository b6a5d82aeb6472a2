"""A fan-out whose workers run in several processes: the same journal as in one process, one
rate limiter per endpoint and one run budget across them.

The workers are real processes (`python -m corral.orchestrator._procs`) against the scripted
model server in this process; the parent is this test's event loop.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import (
    AgentStatus,
    BudgetConfig,
    CorralConfig,
    ItemRecord,
    ModelRequest,
    ModelResponse,
    RunnerHooks,
    open_store,
)
from corral.agents._config import RateLimit
from corral.orchestrator._procs import default_processes, is_loopback
from corral.orchestrator._run import ToolScope
from corral.orchestrator.fanout import FanoutOutcome, FanoutSettings, run_fanout
from corral.orchestrator.fanout._fanout import worker_processes
from corral.orchestrator.model_server import ModelServerOptions, serve_model_server
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate
from corral.tools import InvalidInput, Tool, function_tool
from tests._fanout import SCHEMA, item_of, outputs, report

# Worker processes import corral and open the journal: seconds each on a busy machine.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

WAIT = 60.0
TOGETHER = 3
"""Items whose requests the server holds until all have asked: with each process running at
most 2 of the 4 at once, 3 in flight together means both processes run items."""


def plan_report_answer(request: dict[str, Any]) -> Any:
    """Each worker updates its plan, reports its number (odd numbers first report a string,
    which the schema refuses), then answers: three to four requests, every one journaled."""
    n, done = item_of(request), outputs(request)
    if not done:
        plan = {"plan": [{"step": f"report {n}", "status": "in_progress"}]}
        return [{"type": "function_call", "name": "update_plan", "arguments": json.dumps(plan)}]
    if len(done) == 1 and n % 2 == 1:
        return report({"n": str(n)})
    if "result recorded" not in done[-1]:
        return report({"n": n})
    return f"item {n} reported"


class Together:
    """`plan_report_answer`, once `count` distinct items have sent a request."""

    def __init__(self, count: int = TOGETHER) -> None:
        self.count = count
        self.seen: set[int] = set()
        self.all_in = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if not self.all_in.is_set():
            self.seen.add(item_of(request))
            if len(self.seen) >= self.count:
                self.all_in.set()
            with anyio.fail_after(WAIT):
                await self.all_in.wait()
        return plan_report_answer(request)


def job(tmp_path: Path, items: int, *, processes: int, concurrency: int) -> FanoutJob:
    return FanoutJob(
        items=tuple({"n": n} for n in range(items)),
        template="Item {n}: report it.",
        result_schema=SCHEMA,
        cwd=tmp_path,
        concurrency=concurrency,
        processes=processes,
        worker=WorkerTemplate(tools=("update_plan",)),
    )


async def journaled_outcomes(config: CorralConfig, outcome: FanoutOutcome) -> list[Any]:
    """Each item's status, result and error, and its agent's status and journal (event kinds
    and payloads without ids or times): what a reader of the journal sees of the run."""
    rows: list[Any] = []
    async with open_store(config, read_only=True) as store:
        agents = {a.agent_id: a for a in await store.list_agents(outcome.run_id)}
        for item in await store.items(outcome.run_id):
            assert item.agent_id is not None
            agent = agents[item.agent_id]
            events = [e.kind for e in await store.events(item.agent_id)]
            rows.append((item.index, item.status, item.result, item.error, agent.status, events))
    return rows


class Watching(RunnerHooks):
    """What a progress line counts: agents started and ended, and the tokens of each answer."""

    def __init__(self) -> None:
        self.started = 0
        self.ended: list[str] = []
        self.tokens = 0

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        self.started += 1

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None:
        self.ended.append(str(status))

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None:
        if response is not None:
            self.tokens += response.usage.total_tokens


async def run_with(
    tmp_path: Path, processes: int, journal_url: str | None = None
) -> tuple[FanoutOutcome, Any]:
    options = ModelServerOptions(latency_ms=5)
    hooks = Watching()
    async with serve_model_server(Together(), options) as server:
        home = tmp_path / f"home-{processes}"
        settings = CorralConfig(home=home, base_url=server.base_url, journal={"url": journal_url})
        outcome = await run_fanout(
            settings,
            job(tmp_path, 10, processes=processes, concurrency=4),
            RunSetup(env={}, hooks=hooks),
        )
        stats = server.stats()
    return outcome, (settings, stats, hooks)


async def test_two_processes_journal_the_same_item_and_agent_outcomes_as_one(
    tmp_path: Path,
) -> None:
    one, (config_one, _, seen_one) = await run_with(tmp_path, 1)
    two, (config_two, stats, seen_two) = await run_with(tmp_path, 2)
    assert [i.result for i in two.items] == [{"n": n} for n in range(10)]
    assert await journaled_outcomes(config_two, two) == await journaled_outcomes(config_one, one)
    assert [(i.status, i.result, i.usage) for i in two.items] == [
        (i.status, i.result, i.usage) for i in one.items
    ]
    assert stats["requests"]["total"] == 10 * 3 + 5, "each item's requests sent once"
    assert seen_two.started == seen_one.started == 10, "the caller's hooks saw every worker"
    assert sorted(seen_two.ended) == sorted(seen_one.ended)
    assert seen_two.tokens == seen_one.tokens > 0


async def test_worker_processes_share_a_postgresql_journal_and_leave_the_home_alone(
    tmp_path: Path, postgres_url: str
) -> None:
    one, (config_one, _, _) = await run_with(tmp_path, 1)
    two, (config_two, _, _) = await run_with(tmp_path, 2, postgres_url)
    assert [i.result for i in two.items] == [{"n": n} for n in range(10)]
    assert await journaled_outcomes(config_two, two) == await journaled_outcomes(config_one, one)
    assert not (config_two.home / "journal.sqlite").exists(), "no process wrote a home journal"


async def test_the_in_flight_cap_of_an_endpoint_holds_across_processes(tmp_path: Path) -> None:
    limits = {"default": RateLimit(max_concurrency=3)}
    options = ModelServerOptions(latency_ms=40)
    async with serve_model_server(Together(), options) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url, rate_limits=limits)
        outcome = await run_fanout(
            config, job(tmp_path, 16, processes=2, concurrency=4), RunSetup(env={})
        )
        stats = server.stats()
    assert outcome.done == 16
    # Each process runs at most 2 items at once: 3 together needed both, and a limiter per
    # process would have let all 4 go.
    assert stats["max_in_flight"] == 3


async def test_the_run_budget_is_shared_by_the_processes(tmp_path: Path) -> None:
    limit, concurrency = 12, 4
    budgets = BudgetConfig(run_max_turns=limit)
    async with serve_model_server(Together(), ModelServerOptions(latency_ms=5)) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url, budgets=budgets)
        outcome = await run_fanout(
            config, job(tmp_path, 20, processes=2, concurrency=concurrency), RunSetup(env={})
        )
        stats = server.stats()
    # Past the limit, at most the requests already in flight in every process go out.
    assert limit <= stats["requests"]["total"] <= limit + concurrency
    failed = [item for item in outcome.items if item.status == "failed"]
    assert failed, "the items past the budget failed"
    assert all("run budget exceeded" in (item.error or "") for item in failed)


@pytest.mark.parametrize(
    ("items", "concurrency", "cores", "chosen"),
    [(1000, 256, 2, 2), (1000, 256, 16, 4), (1000, 16, 8, 1), (100, 256, 8, 1), (5, 4, 2, 1)],
)
def test_the_default_takes_a_process_per_core_only_for_a_fanout_big_enough_to_pay(
    items: int, concurrency: int, cores: int, chosen: int
) -> None:
    assert default_processes(items, concurrency, cores) == chosen


@pytest.mark.parametrize(("cores", "chosen"), [(2, 1), (3, 2), (8, 4)])
def test_a_model_server_on_this_machine_keeps_a_core_of_the_default(
    cores: int, chosen: int
) -> None:
    assert default_processes(1000, 256, cores, local_model=True) == chosen


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://127.8.9.10/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        (None, False),
    ],
)
def test_only_a_loopback_endpoint_counts_as_a_model_on_this_machine(
    url: str | None, local: bool
) -> None:
    assert is_loopback(url) is local


def settings_of(concurrency: int) -> FanoutSettings:
    return FanoutSettings(
        template="t",
        result_schema={},
        concurrency=concurrency,
        max_result_tries=1,
        cwd="/",
        sandbox="read-only",
        worker={},
    )


def pending(count: int) -> list[ItemRecord]:
    return [ItemRecord(run_id="r", index=n, input={}) for n in range(count)]


def mine() -> str:
    """The caller's own tool."""
    return "mine"


def own_tool(scope: ToolScope) -> Tool[Any]:
    return function_tool(mine)


@pytest.mark.parametrize(
    ("config", "setup", "said"),
    [
        (CorralConfig(approval_policy="on-request"), RunSetup(), "approval_policy = on-request"),
        (CorralConfig(), RunSetup(tool_providers={"mine": own_tool}), "(mine)"),
    ],
)
def test_what_cannot_reach_a_worker_process_keeps_the_fanout_in_this_one(
    config: CorralConfig, setup: RunSetup, said: str
) -> None:
    records, settings = pending(1000), settings_of(256)
    assert worker_processes(None, records, settings, config, setup) == 1
    with pytest.raises(InvalidInput, match=re.escape(said)):
        worker_processes(2, records, settings, config, setup)
    assert worker_processes(1, records, settings, config, setup) == 1


async def test_a_fanout_done_before_its_worker_process_is_up_still_ends(tmp_path: Path) -> None:
    async with serve_model_server(plan_report_answer) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url)
        with anyio.fail_after(WAIT):
            outcome = await run_fanout(
                config, job(tmp_path, 2, processes=2, concurrency=4), RunSetup(env={})
            )
    assert outcome.done == 2
