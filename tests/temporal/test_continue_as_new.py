"""Agents whose workflow history grows long continue as new and still finish: a fan-out item's
and an exec run's.

The threshold is lowered (`ActivityPolicy.continue_as_new_after`) so that each agent's workflow
continues as new several times mid-turn; its core is rebuilt from the journal each time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.client import Client

from corral.agents import CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, FanoutJob, RunSetup
from corral.orchestrator.temporal import (
    ActivityPolicy,
    TemporalExecutor,
    TemporalSettings,
    agent_workflow_id,
)

from ._harness import WAIT, call, in_process_worker, outputs, time_skipping
from .test_fanout_on_temporal import SCHEMA, TEMPLATE, scripted

pytestmark = pytest.mark.anyio

ITEMS = 2
POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0, continue_as_new_after=12)


async def runs_of(client: Client, workflow_id: str) -> int:
    """How many runs the workflow took: its last, and each one it continued from."""
    count, run_id = 0, None
    while True:
        handle = client.get_workflow_handle(workflow_id, run_id=run_id)
        started = (await handle.fetch_history()).events[0]
        count += 1
        run_id = started.workflow_execution_started_event_attributes.continued_execution_run_id
        if not run_id:
            return count


async def test_an_item_that_continues_as_new_mid_agent_finishes_with_one_journal(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    async with serve_model_server(scripted) as model, time_skipping() as env:
        config = CorralConfig(home=home, base_url=model.base_url)
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                done = await ex.run_fanout(
                    config,
                    FanoutJob(
                        items=tuple([{"n": n} for n in range(ITEMS)]),
                        template=TEMPLATE,
                        result_schema=SCHEMA,
                        cwd=workspace,
                        run_id="run-long",
                    ),
                )
            runs = [await runs_of(env.client, f"run-long.item-{n}") for n in range(ITEMS)]
    assert all(count > 1 for count in runs), f"each item continued as new: {runs}"
    assert [(i.index, i.status, i.result) for i in done.outcome.items] == [
        (n, "done", {"n": n}) for n in range(ITEMS)
    ]
    witness = sorted(int(x) for x in (workspace / "witness.txt").read_text().split())
    assert witness == list(range(ITEMS)), "no tool call ran twice"
    async with open_sqlite_store(home / "journal.sqlite") as store:
        agents = await store.list_agents("run-long")
        journals = [await store.events(a.agent_id) for a in agents]
    assert len(agents) == ITEMS and {a.status for a in agents} == {"completed"}
    for events in journals:
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert [e.kind for e in events].count("tool_result") == 2


def three_steps(request: dict[str, Any]) -> Any:
    """Three shell calls one after the other, each appending its number, then an answer."""
    done = len(outputs(request))
    if done < 3:
        return [call(f"step-{done}", "shell", {"command": f"echo {done} >> steps.txt"})]
    return "three steps taken"


async def test_an_exec_agent_that_continues_as_new_mid_turn_carries_on_where_it_was(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    async with serve_model_server(three_steps) as model, time_skipping() as env:
        config = CorralConfig(home=home, base_url=model.base_url)
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config,
                    ExecJob(task="take steps", cwd=workspace, run_id="run-steps"),
                    RunSetup(env={}),
                )
            runs = await runs_of(env.client, agent_workflow_id("run-steps", outcome.agent_id))
    assert runs > 1, "the agent's workflow continued as new"
    assert outcome.finish.message == "three steps taken"
    assert (workspace / "steps.txt").read_text().split() == ["0", "1", "2"]
    async with open_sqlite_store(home / "journal.sqlite") as store:
        events = await store.events(outcome.agent_id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [e.kind for e in events].count("model_completed") == 4
