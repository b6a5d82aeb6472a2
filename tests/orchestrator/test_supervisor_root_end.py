"""When a run's root ends, every worker it left open ends with it, before the root's `ended`.

A worker at work is interrupted (`the run was cancelled`, journaled by its runner), a queued one
ends without starting, and one that had finished and sat idle just ends; each handle's `ended`
is set, so nothing waiting on a worker hangs once its run is over; a resume then starts the
unstarted one in its turn. The scripted model server
plays every agent (see `test_supervisor`); a client in front of it holds the workers' calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import (
    RUN_CANCELLED,
    AgentsConfig,
    AgentStatus,
    MemoryStore,
    ModelClient,
    ModelRequest,
)
from corral.agents.model import EventCallback, ModelResponse, ModelSettings, open_model_client
from corral.orchestrator._run import ClientPool

from .test_supervisor import (
    WAIT,
    announcing,
    call,
    nickname_in,
    open_supervised_run,
    outputs,
    requests_of,
    run_to_end,
    start_root,
)
from .test_supervisor_admission import JournalOrder, restore_run

pytestmark = pytest.mark.anyio


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


def is_worker(request: ModelRequest) -> bool:
    return "<subagent_context>" in json.dumps([str(item) for item in request.input])


class WorkerStalls:
    """In front of the scripted server: a worker's call hangs until it is cancelled (here, not
    at the server, so cancelling it is clean); the root's second call waits until one has, and
    then either crashes the root's driver (a bug, not a model error) or goes through."""

    def __init__(self, *, crash_root: bool) -> None:
        self.crash_root = crash_root
        self.stalled = anyio.Event()
        self.root_calls = 0

    def clients(self, settings: ModelSettings) -> ModelClient:
        return _Stalling(open_model_client(settings), self)


class _Stalling:
    def __init__(self, inner: ModelClient, script: WorkerStalls) -> None:
        self._inner, self._script = inner, script

    async def complete(
        self, request: ModelRequest, *, on_event: EventCallback | None = None
    ) -> ModelResponse:
        script = self._script
        if is_worker(request):
            script.stalled.set()
            await anyio.sleep_forever()
        script.root_calls += 1
        if script.root_calls == 2:
            with anyio.fail_after(WAIT):
                await script.stalled.wait()
            if script.crash_root:
                raise RuntimeError("the adapter tripped over its own feet")
        return await self._inner.complete(request, on_event=on_event)

    async def aclose(self) -> None:
        await self._inner.aclose()


def spawns_two(request: dict[str, Any]) -> Any:
    """The root spawns two workers in one answer (the second waits for a slot), then is done."""
    if nickname_in(request) is not None:
        return "never answered"
    if not outputs(request):
        return [call(f"spawn-{i}", "spawn_agent", message=f"task {i}") for i in range(2)]
    return "done, without waiting for them"


@pytest.mark.parametrize("crash_root", [True, False], ids=["root-crashes", "root-not-kept-open"])
async def test_a_root_that_ends_first_interrupts_its_working_worker_and_ends_its_queued_one(
    workspace: Path, crash_root: bool
) -> None:
    script = WorkerStalls(crash_root=crash_root)
    clients = ClientPool(factory=script.clients)
    agents = AgentsConfig(max_threads=1)
    async with open_supervised_run(spawns_two, workspace, agents=agents, clients=clients) as (
        runtime,
        server,
    ):
        # Not kept open, the root ends after its turn; kept open, only its crash ends it early.
        root = await start_root(runtime, workspace, "lead", stay_open=crash_root)
        with anyio.fail_after(WAIT):
            await root.ended.wait()
        ended_with_root = [worker.ended.is_set() for worker in root.children]
        working, queued = root.children
        records = [await runtime.store.get_agent(w.agent_id) for w in (working, queued)]
        sent_by_queued = requests_of(server, queued.nickname)
    assert root.status is (AgentStatus.FAILED if crash_root else AgentStatus.COMPLETED)
    assert ended_with_root == [True, True]
    assert (working.status, working.error) == (AgentStatus.INTERRUPTED, RUN_CANCELLED)
    assert (queued.status, queued.error) == (
        AgentStatus.INTERRUPTED,
        f"never started: {RUN_CANCELLED}",
    )
    assert [(r.status, r.error) for r in records if r is not None] == [
        ("interrupted", RUN_CANCELLED),
        ("interrupted", f"never started: {RUN_CANCELLED}"),
    ]
    assert sent_by_queued == []


async def test_a_finished_worker_left_idle_ends_when_its_root_does_and_stays_completed(
    workspace: Path,
) -> None:
    async with open_supervised_run(announcing, workspace) as (runtime, _):
        root = await run_to_end(runtime, workspace, "delegate the count")
        (worker,) = root.children
        ended_with_root = worker.ended.is_set()
        record = await runtime.store.get_agent(worker.agent_id)
    assert root.final_message == "the worker reported"
    assert ended_with_root
    assert (worker.status, worker.final_message) == (AgentStatus.COMPLETED, "3 apples")
    assert record is not None and record.status == "completed"


async def test_a_run_resumed_after_its_root_crashed_starts_the_unstarted_worker_in_its_turn(
    workspace: Path,
) -> None:
    script = WorkerStalls(crash_root=True)
    agents = AgentsConfig(max_threads=1)
    clients = ClientPool(factory=script.clients)
    async with open_supervised_run(spawns_two, workspace, agents=agents, clients=clients) as (
        runtime,
        _,
    ):
        root = await start_root(runtime, workspace, "lead")
        with anyio.fail_after(WAIT):
            await root.ended.wait()
        store = runtime.store
    assert isinstance(store, MemoryStore)
    working, unstarted = (w.agent_id for w in root.children)

    order = JournalOrder()
    async with open_supervised_run(
        spawns_two, workspace, agents=agents, hooks=order, store=store
    ) as (again, server):
        restored = await restore_run(again, store, server.base_url)
        with anyio.fail_after(WAIT):
            await restored[root.agent_id].ended.wait()
    # The resumed worker holds the one slot; the other starts (journaled so) once it is done.
    assert [note for note in order.notes if note[1] in (working, unstarted)] == [
        ("agent_finished", working),
        ("agent_started", unstarted),
        ("agent_finished", unstarted),
    ]
    assert [restored[w].status for w in (working, unstarted)] == [AgentStatus.COMPLETED] * 2
