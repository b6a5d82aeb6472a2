"""Admission, not refusal: spawns past the thread limit wait in order, and every worker ends.

The scripted model server plays every agent (see `test_supervisor`). Concurrency is read from
the run's journal notes (`agent_started`, `agent_finished`) in the order they were written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import (
    AgentsConfig,
    AgentStatus,
    BudgetConfig,
    MemoryStore,
    ModelClient,
    ModelRequest,
    RunnerHooks,
)
from corral.agents.model import EventCallback, ModelResponse, ModelSettings, open_model_client
from corral.orchestrator._run import AgentHandle, ClientPool, Restoring, RunRuntime
from corral.orchestrator.runs import journaled_spec
from tests._scripted import SpawnAllAtOnce

from .test_supervisor import (
    RUN_ID,
    WAIT,
    RootHeld,
    call,
    dispatcher,
    nickname_in,
    open_supervised_run,
    outputs,
    requests_of,
    run_to_end,
    start_root,
)

pytestmark = pytest.mark.anyio

WORKERS = 20
LIMIT = 6


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


class JournalOrder(RunnerHooks):
    """The notes of the run in the order they were journaled."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, str]] = []

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        if kind in ("agent_queued", "agent_started", "agent_finished"):
            self.notes.append((kind, agent_id))

    def most_at_once(self, agents: set[str]) -> int:
        running = most = 0
        for kind, agent_id in self.notes:
            if agent_id in agents and kind != "agent_queued":
                running += 1 if kind == "agent_started" else -1
                most = max(most, running)
        return most

    def started(self) -> list[str]:
        return [agent_id for kind, agent_id in self.notes if kind == "agent_started"]


async def test_twenty_spawns_under_a_limit_of_six_all_finish_with_never_more_than_six_running(
    workspace: Path,
) -> None:
    script, order = SpawnAllAtOnce(WORKERS, WAIT), JournalOrder()
    agents = AgentsConfig(max_threads=LIMIT)
    async with open_supervised_run(script, workspace, agents=agents, hooks=order) as (
        runtime,
        server,
    ):
        root = await run_to_end(runtime, workspace, "do twenty things")
        spawn_answers = outputs(requests_of(server, None)[1])
    assert root.final_message == f"all {WORKERS} done"
    assert [c.status for c in root.children] == [AgentStatus.COMPLETED] * WORKERS
    answers = [json.loads(spawn_answers[f"spawn-{i}"]) for i in range(WORKERS)]
    assert [a["status"] for a in answers] == ["running"] * LIMIT + ["queued"] * (WORKERS - LIMIT)
    assert answers[LIMIT - 1]["capacity"] == {"running": LIMIT, "queued": 0, "limit": LIMIT}
    assert answers[-1]["capacity"] == {"running": LIMIT, "queued": WORKERS - LIMIT, "limit": LIMIT}
    workers = {c.agent_id for c in root.children}
    assert order.most_at_once(workers) == LIMIT
    assert [a for a in order.started() if a in workers] == [c.agent_id for c in root.children]


class OneSlow:
    """Root spawns a worker that stalls and a second that has to wait; it closes the second.

    The root's first answer waits until its tools have been called (`dispatched`), so it is
    still at work, and not ended, when its workers are spawned."""

    def __init__(self) -> None:
        self.dispatched = anyio.Event()
        self.release = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if nickname_in(request) is None:
            with anyio.fail_after(WAIT):
                await self.dispatched.wait()
            return "ok"
        with anyio.fail_after(WAIT):
            await self.release.wait()
        return "slow work done"


async def test_a_queued_worker_is_listed_as_queued_and_once_closed_never_runs(
    workspace: Path,
) -> None:
    script = OneSlow()
    agents = AgentsConfig(max_threads=1)
    async with open_supervised_run(script, workspace, agents=agents) as (runtime, server):
        root = await start_root(runtime, workspace, "lead")
        dispatch = dispatcher(runtime, root)
        try:
            first = json.loads((await dispatch("spawn_agent", message="slow work"))[1])
            second = json.loads((await dispatch("spawn_agent", message="never run"))[1])
            listed = json.loads((await dispatch("list_agents"))[1])
            closed = json.loads((await dispatch("close_agent", target=second["nickname"]))[1])
        finally:
            script.dispatched.set()
            script.release.set()
        with anyio.fail_after(WAIT):
            await root.ended.wait()
        first_ended_with_root = root.children[0].ended.is_set()
        queued_requests = requests_of(server, second["nickname"])
    assert second["status"] == "queued"
    assert second["capacity"] == {"running": 1, "queued": 1, "limit": 1}
    assert [a["status"] for a in listed["agents"]] == ["running", "queued"]
    assert listed["capacity"] == {"running": 1, "queued": 1, "limit": 1}
    assert closed == {"previous_status": "queued"}
    assert queued_requests == []
    assert root.children[0].agent_id == first["agent_id"]
    assert root.children[0].status is AgentStatus.COMPLETED
    assert first_ended_with_root
    record = await runtime.store.get_agent(second["agent_id"])
    assert record is not None and record.status == "closed"


class Exploding:
    """A model client that fails with a bug (not a model error) for one model name."""

    def __init__(self, inner: ModelClient) -> None:
        self._inner = inner

    async def complete(
        self, request: ModelRequest, *, on_event: EventCallback | None = None
    ) -> ModelResponse:
        if request.model == "exploding":
            raise RuntimeError("the adapter tripped over its own feet")
        return await self._inner.complete(request, on_event=on_event)

    async def aclose(self) -> None:
        await self._inner.aclose()


def exploding_clients(settings: ModelSettings) -> ModelClient:
    return Exploding(open_model_client(settings))


def delegates_once(request: dict[str, Any]) -> Any:
    if nickname_in(request) is not None:
        return "never reached"
    done = outputs(request)
    if not done:
        return [call("spawn", "spawn_agent", message="count", model="exploding")]
    return "the worker failed"


async def test_a_worker_whose_driver_crashes_ends_failed_and_its_parent_is_told(
    workspace: Path,
) -> None:
    clients = ClientPool(factory=exploding_clients)
    async with open_supervised_run(delegates_once, workspace, clients=clients) as (
        runtime,
        server,
    ):
        root = await run_to_end(runtime, workspace, "delegate")
        (worker,) = root.children
        record = await runtime.store.get_agent(worker.agent_id)
        notices = [
            json.loads(item["content"][0]["text"].split("\n")[1])
            for request in requests_of(server, None)
            for item in request["input"]
            if item.get("type") == "message"
            and item["content"][0].get("text", "").startswith("<subagent_notification>")
        ]
    assert worker.status is AgentStatus.FAILED
    assert worker.error == "internal error: RuntimeError: the adapter tripped over its own feet"
    assert record is not None and record.status == "failed" and record.error == worker.error
    assert notices[-1]["status"] == "failed" and notices[-1]["message"] == worker.error
    assert root.status is AgentStatus.COMPLETED


class StallsInTheFirstRun:
    """A client whose workers' calls hang until the run is stopped (not at the server, so
    stopping the run cancels them cleanly); once `resumed`, every call goes through."""

    def __init__(self, inner: ModelClient) -> None:
        self._inner = inner

    resumed = False
    stalled = anyio.Event()

    async def complete(
        self, request: ModelRequest, *, on_event: EventCallback | None = None
    ) -> ModelResponse:
        worker = "<subagent_context>" in json.dumps([str(i) for i in request.input])
        if worker and not StallsInTheFirstRun.resumed:
            StallsInTheFirstRun.stalled.set()
            await anyio.sleep_forever()
        return await self._inner.complete(request, on_event=on_event)

    async def aclose(self) -> None:
        await self._inner.aclose()


def stalling_clients(settings: ModelSettings) -> ModelClient:
    return StallsInTheFirstRun(open_model_client(settings))


def answers_at_once(request: dict[str, Any]) -> Any:
    return "ok" if nickname_in(request) is None else "done after the resume"


async def test_a_queued_worker_stays_queued_across_a_resume_and_starts_when_its_turn_comes(
    workspace: Path,
) -> None:
    order = JournalOrder()
    StallsInTheFirstRun.stalled = anyio.Event()
    StallsInTheFirstRun.resumed = False
    agents = AgentsConfig(max_threads=1)
    clients = ClientPool(factory=stalling_clients)
    held = RootHeld(answers_at_once)
    async with open_supervised_run(
        held, workspace, agents=agents, hooks=order, clients=clients
    ) as (runtime, _):
        root = await start_root(runtime, workspace, "lead")
        dispatch = dispatcher(runtime, root)
        await dispatch("spawn_agent", message="first")
        await dispatch("spawn_agent", message="second")
        held.let_go.set()
        with anyio.fail_after(WAIT):
            await StallsInTheFirstRun.stalled.wait()
        await runtime.wait([root], WAIT)  # nothing of the root's is in flight when it stops
        store = runtime.store
    assert isinstance(store, MemoryStore)
    first, second = root.children
    record = await store.get_agent(second.agent_id)
    assert record is not None and record.status == "pending"

    StallsInTheFirstRun.resumed = True
    async with open_supervised_run(
        answers_at_once, workspace, agents=agents, hooks=order, store=store
    ) as (
        again,
        server,
    ):
        restored = await restore_run(again, store, server.base_url)
        with anyio.fail_after(WAIT):
            await again.wait([restored[second.agent_id]], WAIT)
    ends = [
        (kind, agent) for kind, agent in order.notes if agent in (first.agent_id, second.agent_id)
    ]
    assert ends[:4] == [
        ("agent_started", first.agent_id),
        ("agent_queued", second.agent_id),
        ("agent_finished", first.agent_id),  # in the resumed run
        ("agent_started", second.agent_id),
    ]
    assert restored[second.agent_id].status is AgentStatus.COMPLETED


async def restore_run(
    runtime: RunRuntime, store: MemoryStore, base_url: str
) -> dict[str, AgentHandle]:
    """What `corral resume` does: every agent rebuilt, parents first, then all launched."""
    handles: dict[str, AgentHandle] = {}
    for record in await store.list_agents(RUN_ID):
        spec, task = journaled_spec(record, {}, base_url)
        parent = handles.get(record.parent_id) if record.parent_id else None
        handles[record.agent_id] = await runtime.restore(
            spec, task, AgentStatus(record.status), parent=parent, how=Restoring(launch=False)
        )
    for handle in handles.values():
        runtime.launch(handle)
    return handles


class HoldsWorkers:
    """Answers the supervisor at once; its workers' requests wait until `release`, so the
    first worker holds its slot for certain while the second is spawned."""

    def __init__(self) -> None:
        self.release = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if nickname_in(request) is None:
            return "ok"
        await self.release.wait()
        return "done"


async def test_a_queued_worker_whose_turn_comes_after_the_run_budget_is_spent_never_starts(
    workspace: Path,
) -> None:
    agents, budgets = AgentsConfig(max_threads=1), BudgetConfig(run_max_turns=2)
    policy = HoldsWorkers()
    held = RootHeld(policy)
    async with open_supervised_run(held, workspace, agents=agents, budgets=budgets) as (
        runtime,
        server,
    ):
        root = await start_root(runtime, workspace, "lead")
        dispatch = dispatcher(runtime, root)
        await dispatch("spawn_agent", message="first")
        second = json.loads((await dispatch("spawn_agent", message="second"))[1])
        held.let_go.set()
        await runtime.wait([root], WAIT)  # the root's answer is charged before the worker's
        policy.release.set()
        (_, queued) = root.children
        await runtime.wait([queued], WAIT)
        sent_by_second = requests_of(server, second["nickname"])
    assert second["status"] == "queued"
    assert queued.status is AgentStatus.BUDGET_EXCEEDED
    assert queued.error == "never started: run budget exceeded: 2 of 2 model requests used"
    assert sent_by_second == []
