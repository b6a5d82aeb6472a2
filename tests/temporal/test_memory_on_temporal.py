"""Memory on Temporal: an agent prepared on a worker's host recalls the project's memories
into its first turn, and each later turn's context recalls them for its messages, as a local
run does. The activity runs in Temporal's activity test
environment (no server needed)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from corral.agents import CorralConfig, RunRecord, TurnContext, event_from_payload
from corral.orchestrator.memory import MemoryRecord, open_sqlite_memories, project_of
from corral.orchestrator.runs import build_root_spec, journal_path
from corral.orchestrator.temporal._agent_activities import AgentActivities
from corral.orchestrator.temporal._services import open_worker_services
from corral.orchestrator.temporal._wire import PrepareSpecInput, TurnContextInput, WireSpec

pytestmark = pytest.mark.anyio

FACT = "The tests run with make check."


async def prepared_memory(tmp_path: Path, *, enabled: bool, later: bool = False) -> str | None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    config = CorralConfig(
        home=tmp_path / "home",
        base_url="http://127.0.0.1:9/v1",
        memories={"enabled": enabled},
    )
    async with open_sqlite_memories(journal_path(config)) as memories:
        record = MemoryRecord(
            memory_id="mem-1",
            project=project_of(repo),
            text=FACT,
            run_id="run-0",
            agent_id="agent-0",
            created_at=time.time(),
            embedding=(1.0,),
        )
        await memories.add([record], cap=10)
    env = {"HOME": str(tmp_path)}
    spec = build_root_spec(config, cwd=repo, env=env, run_id="run-1")
    async with open_worker_services(config, host="host-1", env=env) as services:
        now = time.time()
        run = RunRecord(
            run_id="run-1", kind="exec", status="running", created_at=now, updated_at=now, config={}
        )
        await services.store.create_run(run)
        activities = AgentActivities(services)
        prepare = PrepareSpecInput(spec=WireSpec.of(spec), task="How are the tests run?")
        prepared = await ActivityEnvironment().run(activities.prepare_spec, prepare)
        if later:
            turn = TurnContextInput(spec=WireSpec.of(spec), query="and the linters?")
            context = await ActivityEnvironment().run(activities.turn_context, turn)
            later_memory: str | None = TurnContext.model_validate(context).memory
            return later_memory
    assert prepared.first_event is not None, "no start hook blocked the task"
    first = event_from_payload(prepared.first_event)
    memory: str | None = first.context.memory  # type: ignore[union-attr]
    return memory


async def test_an_agent_prepared_on_temporal_recalls_the_projects_memories(
    tmp_path: Path,
) -> None:
    memory = await prepared_memory(tmp_path, enabled=True)
    assert memory is not None and FACT in memory


async def test_with_memory_off_an_agent_on_temporal_recalls_nothing(tmp_path: Path) -> None:
    assert await prepared_memory(tmp_path, enabled=False) is None


async def test_a_later_turn_on_temporal_recalls_for_its_messages(tmp_path: Path) -> None:
    memory = await prepared_memory(tmp_path, enabled=True, later=True)
    assert memory is not None and FACT in memory
