"""Restoring agents: one journaled before its task began starts it; a resumed one keeps what it
spent, in its own cost and in the run's budget."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from corral.agents import (
    AgentRecord,
    AgentStatus,
    CorralConfig,
    ModelPrice,
    RunRecord,
    Usage,
    open_sqlite_store,
)
from corral.orchestrator._run import cost_of, price_for
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import (
    ExecJob,
    RunSetup,
    build_root_spec,
    journal_path,
    open_run,
    resume_single,
    run_single_agent,
)

pytestmark = pytest.mark.anyio

WAIT = 20.0


async def test_restoring_an_agent_that_never_received_its_task_starts_the_task(
    tmp_path: Path,
) -> None:
    async with serve_model_server(lambda request: "started after all") as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url)
        async with open_run(config, "run-gap", RunSetup(env={})) as runtime:
            spec = build_root_spec(config, cwd=tmp_path, env={}, run_id="run-gap")
            now = time.time()
            await runtime.store.create_run(
                RunRecord(
                    run_id="run-gap",
                    kind="exec",
                    status="running",
                    created_at=now,
                    updated_at=now,
                    config={},
                )
            )
            # What `RunRuntime.start` leaves when the process dies right after journaling.
            await runtime.store.create_agent(
                AgentRecord(
                    agent_id=spec.agent_id,
                    run_id="run-gap",
                    parent_id=None,
                    nickname="root",
                    role="general",
                    status="running",
                    created_at=now,
                    updated_at=now,
                    base_instructions=spec.instructions,
                    config={**spec.to_journal(), "task": "say hi"},
                )
            )
            handle = await runtime.restore(spec, "say hi", AgentStatus.RUNNING, stay_open=False)
            with anyio.fail_after(WAIT):
                await handle.ended.wait()
    assert (handle.status, handle.error) == (AgentStatus.COMPLETED, None)
    assert handle.final_message == "started after all"


async def test_a_resumed_agent_keeps_the_cost_it_had_spent(tmp_path: Path) -> None:
    prices = {"gpt-5.4-mini": ModelPrice(input_per_mtok=1000.0, output_per_mtok=1000.0)}
    async with serve_model_server(lambda request: "ok") as server:
        config = CorralConfig(home=tmp_path / "home", base_url=server.base_url, prices=prices)
        setup = RunSetup(env={})
        first = await run_single_agent(
            config, ExecJob(task="one", cwd=tmp_path, run_id="run-c"), setup
        )
        await resume_single(config, "run-c", setup=setup, message="two")
    async with open_sqlite_store(journal_path(config)) as store:
        agent = await store.get_agent(first.agent_id)
        events = await store.events(first.agent_id)
    usages = [Usage(**e.payload["usage"]) for e in events if e.kind == "model_completed"]
    price = price_for(prices, "gpt-5.4-mini")
    assert agent is not None and len(usages) == 2
    assert agent.cost_usd == pytest.approx(sum(cost_of(u, price) for u in usages))
