"""A supervisor and its workers, on each executor: a tree of agents spawned with narrowed
profiles, steered (waited on, sent more, listed, closed), and cancelled as one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import (
    AgentRecord,
    AgentStatus,
    CorralConfig,
    JournalEvent,
    RunRecord,
    open_sqlite_store,
)
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob
from corral.orchestrator.supervisor import collab_tool_providers
from tests._scripted import (
    TWO_WORKERS,
    StallWorkers,
    Supervise,
    call,
    is_worker,
    outputs,
    user_texts,
)

from ._seam import WAIT, Seam

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Journaled:
    run: RunRecord
    agents: list[AgentRecord]
    root_events: list[JournalEvent]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


async def test_a_supervisor_spawns_two_workers_with_narrowed_profiles_and_hears_from_both(
    executor: Seam, workspace: Path, tmp_path: Path
) -> None:
    home, run_id = tmp_path / "home", executor.run_id("run-super")
    supervise = Supervise(TWO_WORKERS, last="both workers are done")
    async with serve_model_server(supervise) as model:
        config = CorralConfig(home=home, base_url=model.base_url)
        job = ExecJob(task="review and fix", cwd=workspace, run_id=run_id, role="supervisor")
        async with executor.serving(config):
            setup = executor.setup(run_id, tool_providers=collab_tool_providers())
            with anyio.fail_after(WAIT):
                outcome = await executor.run(job, setup, config)
        requests = [r["normalised"] for r in model.requests]
    assert outcome.finish.status is AgentStatus.COMPLETED
    assert outcome.finish.message == "both workers are done"
    async with open_sqlite_store(home / "journal.sqlite") as store:
        run = await store.get_run(run_id)
        agents = await store.list_agents(run_id)
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


async def test_a_supervisor_waits_for_messages_lists_and_closes_its_worker(
    executor: Seam, workspace: Path, tmp_path: Path
) -> None:
    run_id = executor.run_id("run-steer")
    async with serve_model_server(steer) as model:
        config = CorralConfig(
            home=tmp_path / "home",
            base_url=model.base_url,
            # Refusal at the limit, with no room in the spawn queue (queuing is below).
            agents={"max_threads": 1, "max_queued_spawns": 0},
        )
        job = ExecJob(task="steer", cwd=workspace, run_id=run_id, role="supervisor")
        async with executor.serving(config):
            setup = executor.setup(run_id, tool_providers=collab_tool_providers())
            with anyio.fail_after(WAIT):
                outcome = await executor.run(job, setup, config)
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
    async with open_sqlite_store(config.home / "journal.sqlite") as store:
        agents = await store.list_agents(run_id)
    assert [(a.agent_id, a.status) for a in agents[1:]] == [(worker, "closed")]


async def test_a_spawn_past_the_thread_limit_is_queued_and_starts_when_a_slot_frees(
    executor: Seam, workspace: Path, tmp_path: Path
) -> None:
    run_id = executor.run_id("run-queue")
    two = {"q-a": {"message": "first"}, "q-b": {"message": "second"}}
    supervise = Supervise(two, last="both ran")
    both_answered: list[anyio.Event] = []

    async def queue_or_give_up(request: dict[str, Any]) -> Any:
        # A worker answers only once the supervisor has both spawns' answers: on a fast
        # machine the first worker could otherwise finish, and free its slot, before the
        # second spawn is decided.
        if not both_answered:
            both_answered.append(anyio.Event())
        done = outputs(request)
        if is_worker(request):
            with anyio.fail_after(WAIT):
                await both_answered[0].wait()
        elif all(call_id in done for call_id in two):
            both_answered[0].set()
        refused = [o for c, o in done.items() if c in two and "agent_id" not in o]
        return f"refused: {refused}" if refused else supervise(request)

    async with serve_model_server(queue_or_give_up) as model:
        config = CorralConfig(
            home=tmp_path / "home", base_url=model.base_url, agents={"max_threads": 1}
        )
        job = ExecJob(task="queue", cwd=workspace, run_id=run_id, role="supervisor")
        async with executor.serving(config):
            setup = executor.setup(run_id, tool_providers=collab_tool_providers())
            with anyio.fail_after(WAIT):
                outcome = await executor.run(job, setup, config)
        last = [r["normalised"] for r in model.requests if not is_worker(r["normalised"])][-1]
    assert outcome.finish.message == "both ran"
    spawned = outputs(last)
    assert [json.loads(spawned[c])["status"] for c in two] == ["running", "queued"]
    async with open_sqlite_store(config.home / "journal.sqlite") as store:
        agents = await store.list_agents(run_id)
    assert [a.status for a in agents] == ["completed"] * 3


async def cancel_midway(executor: Seam, workspace: Path, home: Path) -> Journaled:
    """A supervisor run cancelled while both its workers wait on the model; what it journaled."""
    run_id = executor.run_id("run-cancel")
    policy = StallWorkers()
    job = ExecJob(task="review and fix", cwd=workspace, run_id=run_id, role="supervisor")
    async with serve_model_server(policy) as model:
        config = CorralConfig(home=home, base_url=model.base_url)
        try:
            async with executor.serving(config), anyio.create_task_group() as tg:
                setup = executor.setup(run_id, tool_providers=collab_tool_providers())
                tg.start_soon(executor.run_to_cancel, job, setup, config)
                with anyio.fail_after(WAIT):
                    await policy.stalled.wait()
                    await executor.cancel(run_id)
            await executor.replay(run_id, "cancelled_supervisor")
        finally:
            policy.release.set()  # the workers' model calls end before the server closes
    async with open_sqlite_store(home / "journal.sqlite") as store:
        run = await store.get_run(run_id)
        agents = await store.list_agents(run_id)
        root_events = await store.events(agents[0].agent_id)
    assert run is not None
    return Journaled(run, agents, root_events)


async def test_cancelling_a_run_interrupts_every_worker(
    executor: Seam, workspace: Path, tmp_path: Path
) -> None:
    journaled = await cancel_midway(executor, workspace, tmp_path / "home")
    assert [a.status for a in journaled.agents] == ["interrupted"] * 3
    assert journaled.root_events[-1].kind == "interrupt"


async def test_a_cancelled_run_and_its_agents_are_journaled_as_cancelled(
    executor: Seam, workspace: Path, tmp_path: Path
) -> None:
    journaled = await cancel_midway(executor, workspace, tmp_path / "home")
    assert journaled.run.status == "interrupted"
    assert [a.error for a in journaled.agents] == ["the run was cancelled"] * 3
