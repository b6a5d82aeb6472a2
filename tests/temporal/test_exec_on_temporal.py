"""Exec runs on Temporal: a supervisor and its workers as workflows, and their cancellation.

Each test runs a time-skipping test server, a corral worker in this process and the scripted
model server, all on loopback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import CancelledError

from corral.agents import AgentStatus, CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, RunSetup
from corral.orchestrator.supervisor import collab_tool_providers
from corral.orchestrator.temporal import ActivityPolicy, TemporalExecutor, TemporalSettings

from ._harness import WAIT, call, in_process_worker, outputs, record, time_skipping, user_texts

pytestmark = pytest.mark.anyio

POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
WORKERS: dict[str, dict[str, Any]] = {
    "spawn-a": {"message": "review a.py", "role": "reviewer", "sandbox": "read-only"},
    "spawn-b": {"message": "fix the bug in src", "write_set": ["src"]},
}
COMPACT_AT = 9000
NO_TOOLS = RunSetup(env={})
SUPERVISOR_SETUP = RunSetup(tool_providers=collab_tool_providers(), env={})


def is_worker(request: dict[str, Any]) -> bool:
    return any(text.startswith("<subagent_context>") for text in user_texts(request))


def supervise(request: dict[str, Any]) -> Any:
    """Workers answer at once; the supervisor spawns two and waits until both are done."""
    if is_worker(request):
        return f"done: {user_texts(request)[-1]}"
    done = outputs(request)
    if not done:
        return [call(call_id, "spawn_agent", args) for call_id, args in WORKERS.items()]
    spawned = [json.loads(done[call_id])["agent_id"] for call_id in WORKERS]
    finished: set[str] = set()
    for call_id, output in done.items():
        if call_id.startswith("wait-"):
            finished.update(json.loads(output)["status"])
    pending = [agent for agent in spawned if agent not in finished]
    if pending:
        return [call(f"wait-{len(done)}", "wait_agent", {"targets": pending, "timeout_ms": 20_000})]
    return "both workers are done"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


async def test_a_supervisor_on_temporal_spawns_two_workers_and_hears_from_both(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    async with serve_model_server(supervise) as model, time_skipping() as env:
        config = CorralConfig(home=home, base_url=model.base_url)
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config,
                    ExecJob(
                        task="review and fix", cwd=workspace, run_id="run-super", role="supervisor"
                    ),
                    SUPERVISOR_SETUP,
                )
        requests = [r["normalised"] for r in model.requests]
    assert outcome.finish.status is AgentStatus.COMPLETED
    assert outcome.finish.message == "both workers are done"
    async with open_sqlite_store(home / "journal.sqlite") as store:
        run = await store.get_run("run-super")
        agents = await store.list_agents("run-super")
    assert run is not None and run.status == "completed" and run.kind == "exec"
    root, *workers = agents
    assert root.agent_id == outcome.agent_id and root.parent_id is None
    assert [w.parent_id for w in workers] == [root.agent_id] * 2
    assert {a.status for a in agents} == {"completed"}
    by_task = {w.config["task"]: w for w in workers}
    reviewer, fixer = by_task["review a.py"], by_task["fix the bug in src"]
    assert reviewer.role == "reviewer"
    assert reviewer.config["profile"]["sandbox"] == "read-only"
    assert fixer.config["profile"]["writable_roots"] == [str(workspace / "src")]
    worker_requests = [r for r in requests if is_worker(r)]
    assert len(worker_requests) == 2
    assert not {"spawn_agent"} & {t["name"] for r in worker_requests for t in r["tools"]}


class StallWorkers:
    """Like `supervise`, but every worker's model request hangs until `release`; `stalled`
    is set once both workers are waiting and the supervisor is in `wait_agent`."""

    def __init__(self) -> None:
        self.waiting: set[str] = set()
        self.stalled = anyio.Event()
        self.release = anyio.Event()
        self.supervisor_waits = False

    async def __call__(self, request: dict[str, Any]) -> Any:
        if not is_worker(request):
            answer = supervise(request)
            self.supervisor_waits = answer[0]["name"] == "wait_agent" if answer else False
            self._check()
            return answer
        self.waiting.add(user_texts(request)[-1])
        self._check()
        await self.release.wait()
        return "too late"

    def _check(self) -> None:
        if len(self.waiting) == 2 and self.supervisor_waits:
            self.stalled.set()


async def test_cancelling_a_run_interrupts_every_worker_and_the_journal_says_so(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    policy = StallWorkers()
    async with serve_model_server(policy) as model, time_skipping() as env:
        config = CorralConfig(home=home, base_url=model.base_url)
        try:
            async with in_process_worker(env.client, config):
                ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
                handle = await ex.start_single(
                    config,
                    ExecJob(
                        task="review and fix", cwd=workspace, run_id="run-cancel", role="supervisor"
                    ),
                    SUPERVISOR_SETUP,
                )
                with anyio.fail_after(WAIT):
                    await policy.stalled.wait()
                    await handle.cancel()
                    with pytest.raises(WorkflowFailureError) as failed:
                        await handle.result()
                await record(env.client, "run-cancel", "cancelled_supervisor")
        finally:
            policy.release.set()
    assert isinstance(failed.value.cause, CancelledError)
    async with open_sqlite_store(home / "journal.sqlite") as store:
        run = await store.get_run("run-cancel")
        agents = await store.list_agents("run-cancel")
        root_events = await store.events(agents[0].agent_id)
    assert run is not None and run.status == "interrupted"
    assert len(agents) == 3
    assert [(a.status, a.error) for a in agents] == [("interrupted", "the run was cancelled")] * 3
    assert root_events[-1].kind == "interrupt"


SUMMARY = "SUMMARY: wrote big.txt twice"


def long_work(request: dict[str, Any]) -> Any:
    """One shell call with a long output, which forces a compaction, then a short one, then an
    answer; a summary whenever one is asked for."""
    if not request.get("tools"):
        return SUMMARY
    summarised = any(SUMMARY in text for text in user_texts(request))
    if not summarised:
        command = "head -c 24000 /dev/zero | tr '\\0' x"
        return [call("big", "shell", {"command": command})]
    if "small" not in outputs(request):
        return [call("small", "shell", {"command": "echo small"})]
    return "finished after compacting"


async def test_an_agent_whose_history_outgrows_its_context_compacts_on_temporal(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    async with serve_model_server(long_work) as model, time_skipping() as env:
        config = CorralConfig(
            home=home, base_url=model.base_url, model_auto_compact_token_limit=COMPACT_AT
        )
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config,
                    ExecJob(task="make big output", cwd=workspace, run_id="run-big"),
                    RunSetup(env={}),
                )
            await record(env.client, "run-big", "compaction")
        requests = [r["normalised"] for r in model.requests]
    assert outcome.finish.message == "finished after compacting"
    summaries = [r for r in requests if not r.get("tools")]
    assert summaries, "a summary was asked for"
    assert any(SUMMARY in "".join(user_texts(r)) for r in requests if r.get("tools"))
    async with open_sqlite_store(home / "journal.sqlite") as store:
        kinds = [e.kind for e in await store.events(outcome.agent_id)]
    assert {"compaction_done", "compaction_prepared"} & set(kinds), kinds


def steer(request: dict[str, Any]) -> Any:
    """A worker counts the tasks it was given; the supervisor runs one through its paces:
    spawns two (the second over the thread limit), waits, sends it more, lists, closes."""
    if is_worker(request):
        return f"counted {sum(t.startswith('count') for t in user_texts(request))}"
    done = outputs(request)
    if "s1" not in done:
        return [
            call("s1", "spawn_agent", {"message": "count"}),
            call("s2", "spawn_agent", {"message": "count too"}),
        ]
    worker = json.loads(done["s1"])["agent_id"]
    wait = {"targets": [worker], "timeout_ms": 20_000}
    steps = [
        ("w1", "wait_agent", wait),
        ("i1", "send_input", {"target": worker, "message": "count again"}),
        ("w2", "wait_agent", wait),
        ("l1", "list_agents", {}),
        ("c1", "close_agent", {"target": worker}),
    ]
    for call_id, name, args in steps:
        if call_id not in done:
            return [call(call_id, name, args)]
    return "all done"


async def test_a_supervisor_on_temporal_waits_for_messages_lists_and_closes_its_worker(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    async with serve_model_server(steer) as model, time_skipping() as env:
        config = CorralConfig(home=home, base_url=model.base_url, agents={"max_threads": 1})
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config,
                    ExecJob(task="steer", cwd=workspace, role="supervisor"),
                    SUPERVISOR_SETUP,
                )
        last = [r["normalised"] for r in model.requests if not is_worker(r["normalised"])][-1]
    assert outcome.finish.message == "all done"
    done = outputs(last)
    assert "thread limit reached (agents.max_threads = 1)" in done["s2"]
    worker = json.loads(done["s1"])["agent_id"]
    assert json.loads(done["w1"])["status"][worker]["message"] == "counted 1"
    assert json.loads(done["i1"]) == {"delivered": True}
    assert json.loads(done["w2"])["status"][worker]["message"] == "counted 2"
    listed = json.loads(done["l1"])["agents"]
    assert [(a["agent_id"], a["status"], a["task"]) for a in listed] == [
        (worker, "completed", "count")
    ]
    assert json.loads(done["c1"]) == {"previous_status": "completed"}
    async with open_sqlite_store(home / "journal.sqlite") as store:
        agents = await store.list_agents(outcome.run_id)
    assert [(a.agent_id, a.status) for a in agents[1:]] == [(worker, "closed")]
