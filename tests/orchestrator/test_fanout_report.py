"""`report_result` against the scripted model server: validation, retries and failures."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.agents import BudgetConfig, CorralConfig, open_sqlite_store
from corral.orchestrator.fanout import FanoutOutcome, run_fanout
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import FanoutJob, RunSetup, WorkerTemplate, journal_path
from tests._fanout import SCHEMA, item_of, outputs, report

pytestmark = pytest.mark.anyio

TEMPLATE = "Item {n}: report n."

Policy = Callable[[dict[str, Any]], Any]


async def fan_out(
    tmp_path: Path, policy: Policy, schema: Any = SCHEMA, **options: Any
) -> tuple[FanoutOutcome, list[dict[str, Any]], CorralConfig]:
    async with serve_model_server(policy) as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url)
        job = FanoutJob(
            items=tuple(options.pop("items", [{"n": 7}])),
            template=TEMPLATE,
            result_schema=schema,
            cwd=tmp_path,
            worker=WorkerTemplate(tools=()),
            **options,
        )
        outcome = await run_fanout(config, job, RunSetup(env={}))
        requests = [record["normalised"] for record in server.requests]
    return outcome, requests, config


def invalid_then_valid(request: dict[str, Any]) -> Any:
    done = outputs(request)
    if not done:
        return report({"n": "seven"})
    if len(done) == 1:
        return report({"n": item_of(request)})
    return "reported"


async def test_an_invalid_result_goes_back_to_the_model_and_a_valid_retry_is_kept(
    tmp_path: Path,
) -> None:
    outcome, requests, config = await fan_out(tmp_path, invalid_then_valid, run_id="run-retry")
    (item,) = outcome.items
    assert (item.status, item.result, item.error) == ("done", {"n": 7}, None)
    assert item.usage["input_tokens"] > 0 and item.usage["output_tokens"] > 0
    assert len(requests) == 3
    told = outputs(requests[1])[0]
    assert "$.n: 'seven' is not of type 'integer'" in told and "1 of 3 tries" in told
    assert outputs(requests[2])[1] == "result recorded"
    async with open_sqlite_store(journal_path(config)) as store:
        run = await store.get_run("run-retry")
        (record,) = await store.items("run-retry")
    assert run is not None and (run.kind, run.status) == ("fanout", "done")
    assert run.config["template"] == TEMPLATE and run.config["result_schema"] == SCHEMA
    assert run.config["sandbox"] == "workspace-write" and run.config["cwd"] == str(tmp_path)
    assert run.summary["done"] == 1 and (record.status, record.result) == ("done", {"n": 7})


async def test_a_worker_that_never_reports_fails_its_item_with_the_reason(tmp_path: Path) -> None:
    outcome, requests, _ = await fan_out(tmp_path, lambda request: "all done, trust me")
    (item,) = outcome.items
    assert item.status == "failed" and item.result is None
    assert item.error == "the worker finished without calling report_result"
    assert not outcome.ok and len(requests) == 1


async def test_the_item_fails_once_its_tries_are_used_up(tmp_path: Path) -> None:
    def always_invalid(request: dict[str, Any]) -> Any:
        done = outputs(request)
        if done and "last try" in done[-1]:
            return "giving up"
        return report({"n": None})

    outcome, requests, _ = await fan_out(tmp_path, always_invalid, max_result_tries=2)
    (item,) = outcome.items
    assert item.status == "failed"
    assert item.error == "2 invalid results: $.n: None is not of type 'integer'"
    assert len(requests) == 3


async def test_a_non_object_schema_is_reported_under_result_and_unwrapped(tmp_path: Path) -> None:
    labels = {"type": "array", "items": {"enum": ["bug", "feature"]}}

    def labeller(request: dict[str, Any]) -> Any:
        return report({"result": ["bug"]}) if not outputs(request) else "labelled"

    outcome, requests, _ = await fan_out(tmp_path, labeller, schema=labels)
    assert [(i.status, i.result) for i in outcome.items] == [("done", ["bug"])]
    (tool,) = requests[0]["tools"]
    assert tool["name"] == "report_result" and tool["strict"] is False
    assert tool["parameters"]["properties"]["result"] == labels


async def test_results_come_back_in_item_order_whatever_order_workers_finish(
    tmp_path: Path,
) -> None:
    def reporter(request: dict[str, Any]) -> Any:
        return report({"n": item_of(request) * 10}) if not outputs(request) else "ok"

    items = [{"n": n} for n in range(5)]
    out = tmp_path / "out" / "results.jsonl"
    outcome, _, _ = await fan_out(tmp_path, reporter, items=items, concurrency=3, out=out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["index"] for line in lines] == [0, 1, 2, 3, 4]
    assert [line["result"] for line in lines] == [{"n": n * 10} for n in range(5)]
    assert set(lines[0]) >= {"index", "status", "result", "error", "usage", "cost_usd"}
    assert outcome.done == 5


async def test_items_left_when_the_run_budget_runs_out_fail_without_starting(
    tmp_path: Path,
) -> None:
    def reporter(request: dict[str, Any]) -> Any:
        return report({"n": item_of(request)}) if not outputs(request) else "ok"

    async with serve_model_server(reporter) as server:
        config = CorralConfig(
            home=tmp_path / "home",
            base_url=server.base_url,
            budgets=BudgetConfig(run_max_turns=2),
        )
        outcome = await run_fanout(
            config,
            FanoutJob(
                items=tuple([{"n": n} for n in range(3)]),
                template=TEMPLATE,
                result_schema=SCHEMA,
                cwd=tmp_path,
                concurrency=1,
                worker=WorkerTemplate(tools=()),
            ),
            RunSetup(env={}),
        )
        requests = len(server.requests)
    assert [item.status for item in outcome.items] == ["done", "failed", "failed"]
    assert outcome.items[1].error == "run budget exceeded: 2 of 2 model requests used"
    assert outcome.items[2].agent_id is None and requests == 2


async def test_workers_are_told_to_report_through_the_tool_in_their_developer_message(
    tmp_path: Path,
) -> None:
    _, requests, _ = await fan_out(tmp_path, invalid_then_valid)
    developer = [i for i in requests[0]["input"] if i.get("role") == "developer"]
    texts = "".join(part["text"] for message in developer for part in message["content"])
    assert "<developer_instructions>" in texts and "call `report_result` once" in texts
