"""A model that floods its supervisor's spawn tool gets, on either executor, at most
`agents.max_threads` workers running and `agents.max_queued_spawns` waiting: the rest are
refused, and no refused worker is journaled or ever asks the model anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob
from corral.orchestrator.supervisor import collab_tool_providers
from tests._scripted import call, is_worker, outputs, user_texts

from ._seam import WAIT, Seam

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

FULL = "the spawn queue is full (agents.max_queued_spawns = {queued})"


def spawned_ids(done: dict[str, str], calls: list[str]) -> list[str]:
    return [json.loads(done[c])["agent_id"] for c in calls if "agent_id" in done[c]]


class Flood:
    """A supervisor that spawns `count` workers in one turn, then waits for those that were
    accepted. A worker answers once the supervisor has heard every spawn's answer, so no slot
    frees while the flood is still being decided."""

    def __init__(self, count: int) -> None:
        self.calls = [f"s{n}" for n in range(count)]
        self.decided = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if is_worker(request):
            with anyio.fail_after(WAIT):
                await self.decided.wait()
            return f"done: {user_texts(request)[-1]}"
        done = outputs(request)
        if not done:
            return [call(c, "spawn_agent", {"message": f"task {c}"}) for c in self.calls]
        self.decided.set()
        finished: set[str] = set()
        for call_id, output in done.items():
            if call_id.startswith("wait-"):
                finished.update(json.loads(output)["status"])
        pending = [a for a in spawned_ids(done, self.calls) if a not in finished]
        if pending:
            wait = {"targets": pending, "timeout_ms": 20_000}
            return [call(f"wait-{len(done)}", "wait_agent", wait)]
        return "the flood is over"


@pytest.mark.parametrize(("count", "threads", "queued"), [(5, 1, 2), (4, 2, 0)])
async def test_a_spawn_flood_runs_the_thread_limit_queues_the_queue_and_refuses_the_rest(
    executor: Seam, tmp_path: Path, count: int, threads: int, queued: int
) -> None:
    home, cwd = tmp_path / "home", tmp_path / "repo"
    run_id = executor.run_id(f"run-flood-{count}")
    (cwd / ".git").mkdir(parents=True)
    limits = {"max_threads": threads, "max_queued_spawns": queued}
    async with serve_model_server(Flood(count)) as model:
        config = CorralConfig(home=home, base_url=model.base_url, agents=limits)
        job = ExecJob(task="flood", cwd=cwd, run_id=run_id, role="supervisor")
        async with executor.serving(config):
            setup = executor.setup(run_id, tool_providers=collab_tool_providers())
            with anyio.fail_after(WAIT):
                outcome = await executor.run(job, setup, config)
        first = [r["normalised"] for r in model.requests if not is_worker(r["normalised"])][1]
        worker_requests = sum(1 for r in model.requests if is_worker(r["normalised"]))
    assert outcome.finish.message == "the flood is over"
    answers = [outputs(first)[f"s{n}"] for n in range(count)]
    accepted = threads + queued
    statuses = [json.loads(a)["status"] for a in answers[:accepted]]
    assert statuses == ["running"] * threads + ["queued"] * queued
    assert all(FULL.format(queued=queued) in a for a in answers[accepted:])
    assert worker_requests == accepted, "each accepted worker asked once, no refused one"
    async with open_sqlite_store(home / "journal.sqlite") as store:
        agents = await store.list_agents(run_id)
    assert [a.status for a in agents] == ["completed"] * (1 + accepted)
