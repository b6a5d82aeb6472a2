"""`corral serve` with runs on Temporal, seen and steered through the same API as local runs.

One dev server per module on loopback; each test runs one real `corral worker` subprocess that
shares CORRAL_HOME with a service in this process, whose executor is Temporal, and the scripted
model server, which outlives the service where a test restarts it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import ServiceConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecutorSettings, executor_from_settings
from corral.orchestrator.service import (
    ApprovalClosed,
    CorralClient,
    CorralService,
    ServerEvent,
    ServiceLimits,
    ServiceOptions,
    ServiceUnreachable,
    UnknownApproval,
)
from corral.orchestrator.temporal import TemporalSettings, connect
from tests._scripted import StallWorkers
from tests.temporal import conftest as temporal_fixtures
from tests.temporal.test_fanout_on_temporal import corral_worker

from ._harness import SCHEMA, TEMPLATE, TOKEN, Gate, allowing_policy, item_of, outputs, reporter
from .test_approvals import escalating

pytestmark = pytest.mark.anyio

temporal_address = temporal_fixtures.temporal_address
WAIT = 40.0
HOST = "solo"


@asynccontextmanager
async def service(
    home: Path, address: str, model_url: str, settings: ServiceConfig | None = None
) -> AsyncIterator[CorralClient]:
    """A service in this process whose runs go to the Temporal server at `address`."""
    executor = executor_from_settings(ExecutorSettings(kind="temporal", address=address))
    options = ServiceOptions(
        home=home,
        token=TOKEN,
        port=0,
        limits=ServiceLimits(),
        env={"CORRAL_HOME": str(home)},
        executor=executor,
        policy=allowing_policy(home.parent, model_url, settings),
    )
    async with anyio.create_task_group() as tg:
        url = await tg.start(CorralService(options).run)
        async with CorralClient(url, TOKEN) as client:
            yield client
        tg.cancel_scope.cancel()


def fanout(count: int, model_url: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "fanout",
        "items": [{"n": n} for n in range(count)],
        "template": TEMPLATE,
        "schema": SCHEMA,
        "base_url": model_url,
        "cd": str(cwd),
        **fields,
    }


async def all_events(client: CorralClient, run_id: str) -> list[ServerEvent]:
    with anyio.fail_after(WAIT):
        return [e async for e in client.events(run_id)]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


async def test_a_fanout_submitted_over_http_runs_on_temporal_with_results_and_events(
    temporal_address: str, home: Path, tmp_path: Path
) -> None:
    async with (
        serve_model_server(reporter) as model,
        corral_worker(temporal_address, HOST, home),
        service(home, temporal_address, model.base_url) as client,
    ):
        run_id = (await client.submit(fanout(3, model.base_url, tmp_path)))["id"]
        events = await all_events(client, run_id)
        run = await client.get(run_id)
        results = await client.results(run_id)
    assert (events[-1].event, events[-1].data["status"]) == ("end", "done")
    journaled = [e for e in events if e.id is not None]
    assert [e.id for e in journaled] == list(range(1, len(journaled) + 1))
    assert {e.data["kind"] for e in journaled} >= {"user_input", "model_completed", "tool_result"}
    assert run["status"] == "done"
    assert [r["result"] for r in results] == [{"n": 0}, {"n": 10}, {"n": 20}]


class Escalate:
    """Asks once to run a command outside the sandbox, then repeats what it was told."""

    def __call__(self, request: dict[str, Any]) -> Any:
        told = outputs(request)
        if told:
            return f"told: {told[-1]}"
        arguments = {
            "command": ["echo", "approved-on-temporal"],
            "escalate": True,
            "justification": "May I echo outside the sandbox?",
        }
        return [{"type": "function_call", "name": "shell", "arguments": json.dumps(arguments)}]


async def test_an_approval_on_temporal_is_listed_and_approving_it_lets_the_run_finish(
    temporal_address: str, home: Path, tmp_path: Path
) -> None:
    request = {
        "kind": "exec",
        "task": "echo outside the sandbox",
        "cd": str(tmp_path),
        "config": ['approval_policy="on-request"', "shell.approval_timeout_sec=60"],
    }
    async with (
        serve_model_server(Escalate()) as model,
        corral_worker(temporal_address, HOST, home),
        service(home, temporal_address, model.base_url, escalating(tmp_path)) as client,
    ):
        run_id = (await client.submit({**request, "base_url": model.base_url}))["id"]
        with anyio.fail_after(WAIT):
            async for event in client.events(run_id):
                if event.data.get("kind") == "approval_requested":
                    break
        pending = await client.approvals(run_id, state="pending")
        answered = await client.answer(pending[0]["id"], "approve", "go ahead")
        with pytest.raises(ApprovalClosed) as again:
            await client.answer(pending[0]["id"], "deny")
        with pytest.raises(ApprovalClosed) as unasked:
            await client.answer(f"{run_id}.agent-x:call.escalate", "approve")
        with pytest.raises(UnknownApproval):
            await client.answer(f"{run_id}-other.agent-x:call.escalate", "approve")
        events = await all_events(client, run_id)
        listed = await client.approvals(run_id)
        with pytest.raises(ServiceUnreachable) as missing:
            await client.approvals("run-nowhere")
        told = outputs(model.requests[-1]["normalised"])
    assert len(pending) == 1
    ask = pending[0]
    assert (ask["run_id"], ask["tool"], ask["kind"], ask["state"]) == (
        run_id,
        "shell",
        "escalate",
        "pending",
    )
    assert "approved-on-temporal" in ask["command"] and ask["cwd"] == str(tmp_path)
    assert ask["reason"] == "May I echo outside the sandbox?"
    assert ask["deadline"] == pytest.approx(ask["created_at"] + 60)
    assert (answered["state"], answered["decision_reason"], answered["answered_by"]) == (
        "approved",
        "go ahead",
        "api",
    )
    assert "already approved" in str(again.value)
    assert f"run {run_id} has asked for no approval" in str(unasked.value)
    assert (events[-1].event, events[-1].data["status"]) == ("end", "completed")
    assert [(a["id"], a["state"]) for a in listed] == [(ask["id"], "approved")]
    assert str(missing.value) == "404: no run run-nowhere"
    assert any("approved-on-temporal" in output for output in told)


async def test_cancelling_a_supervisor_run_over_http_interrupts_every_agent(
    temporal_address: str, home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "src").mkdir()
    policy = StallWorkers()
    request = {"kind": "exec", "task": "review and fix", "role": "supervisor"}
    try:
        async with (
            serve_model_server(policy) as model,
            corral_worker(temporal_address, HOST, home),
            service(home, temporal_address, model.base_url) as client,
        ):
            submitted = {**request, "base_url": model.base_url, "cd": str(workspace)}
            run_id = (await client.submit(submitted))["id"]
            with anyio.fail_after(WAIT):
                await policy.stalled.wait()
            cancelled = await client.cancel(run_id)
            events = await all_events(client, run_id)
            policy.release.set()  # the worker's model calls end before it shuts down
    finally:
        policy.release.set()
    async with open_sqlite_store(home / "journal.sqlite") as store:
        run = await store.get_run(run_id)
        agents = await store.list_agents(run_id)
    assert cancelled["status"] == "cancelled"
    assert (events[-1].event, events[-1].data["status"]) == ("end", "cancelled")
    assert run is not None and run.status == "interrupted"
    assert len(agents) == 3
    assert [(a.status, a.error) for a in agents] == [("interrupted", "the run was cancelled")] * 3
    kinds = [e.data.get("kind") for e in events if e.id is not None]
    assert kinds.count("interrupt") >= 1, "the stream shows the agents' ends"


async def test_a_restarted_service_rejoins_its_run_on_temporal_which_completes(
    temporal_address: str, home: Path, tmp_path: Path
) -> None:
    gate = Gate({2})
    async with serve_model_server(gate) as model, corral_worker(temporal_address, HOST, home):
        async with service(home, temporal_address, model.base_url) as first:
            submitted = fanout(3, model.base_url, tmp_path, concurrency=1)
            run_id = (await first.submit(submitted))["id"]
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
        async with service(home, temporal_address, model.base_url) as second:
            gate.release()
            events = await all_events(second, run_id)
            results = await second.results(run_id)
        firsts = [item_of(r["normalised"]) for r in model.requests if not outputs(r["normalised"])]
    assert (events[-1].event, events[-1].data["status"]) == ("end", "done")
    ids = [e.id for e in events if e.id is not None]
    assert ids == list(range(1, len(ids) + 1)), "event ids run on with no gap or repeat"
    assert [r["result"] for r in results] == [{"n": 0}, {"n": 10}, {"n": 20}]
    assert sorted(firsts) == [0, 1, 2], "no item was started twice"


async def test_runs_that_ended_on_temporal_while_the_service_was_down_end_at_its_next_start(
    temporal_address: str, home: Path, tmp_path: Path
) -> None:
    gate = Gate(expect=2)
    exec_run = {"kind": "exec", "task": "Item 7: say done.", "cd": str(tmp_path)}
    async with serve_model_server(gate) as model, corral_worker(temporal_address, HOST, home):
        async with service(home, temporal_address, model.base_url) as first:
            fanned = (await first.submit(fanout(2, model.base_url, tmp_path, concurrency=1)))["id"]
            single = (await first.submit({**exec_run, "base_url": model.base_url}))["id"]
            with anyio.fail_after(WAIT):
                await gate.reached.wait()
        gate.release()
        temporal = await connect(TemporalSettings(address=temporal_address))
        with anyio.fail_after(WAIT):
            for run_id in (fanned, single):
                await temporal.get_workflow_handle(run_id).result()
        async with service(home, temporal_address, model.base_url) as second:
            endings = [(await all_events(second, r))[-1] for r in (fanned, single)]
            results = await second.results(fanned)
        firsts = [item_of(r["normalised"]) for r in model.requests if not outputs(r["normalised"])]
    assert [(e.event, e.data["status"]) for e in endings] == [("end", "done"), ("end", "completed")]
    assert [r["result"] for r in results] == [{"n": 0}, {"n": 10}]
    assert sorted(firsts) == [0, 1, 7], "nothing ran again"
