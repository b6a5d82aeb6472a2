"""The instructions cap in a supervised run: a refused worker never costs its parent the run."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from corral.orchestrator.supervisor import SpawnRequest, spawn_child

from .test_supervisor import (
    WAIT,
    WAIT_MS,
    RootHeld,
    dispatcher,
    open_supervised_run,
    root_says_ok,
    start_root,
)

pytestmark = pytest.mark.anyio

# 7,680 tokens: within the AGENTS.md budget, but past the default 8,192-token cap beside the
# global AGENTS.md of the home (about 620 tokens; corral's own base instructions do not count).
OVERSIZED = "Follow the house style in every file you touch.\n" * 640
GLOBAL = "Answer in English.\n" * 130


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "AGENTS.md").write_text(GLOBAL)
    return root


async def test_a_spawn_over_the_cap_is_refused_to_the_parent_naming_the_file(
    workspace: Path,
) -> None:
    held = RootHeld(root_says_ok)
    async with open_supervised_run(held, workspace) as (runtime, _):
        root = await start_root(runtime, workspace, "lead")
        (workspace / "AGENTS.md").write_text(OVERSIZED)
        ok, text = await dispatcher(runtime, root)("spawn_agent", message="count the apples")
        still_there = runtime.agents
        held.let_go.set()

    assert not ok
    assert str(workspace / "AGENTS.md") in text and "8,192-token cap" in text
    assert [a.agent_id for a in still_there] == [root.agent_id], "no half-started worker"


async def test_a_worker_whose_agents_md_grows_past_the_cap_ends_failed_keeping_its_work(
    workspace: Path,
) -> None:
    held = RootHeld(root_says_ok)
    async with open_supervised_run(held, workspace) as (runtime, _):
        root = await start_root(runtime, workspace, "lead")
        worker = await spawn_child(runtime, root, SpawnRequest("count the apples"))
        await runtime.wait([worker], WAIT)
        (workspace / "AGENTS.md").write_text(OVERSIZED)
        dispatch = dispatcher(runtime, root)
        await dispatch("send_input", target=worker.nickname, message="now count the plums")
        with anyio.fail_after(WAIT):
            _, waited = await dispatch("wait_agent", targets=[worker.agent_id], timeout_ms=WAIT_MS)
        held.let_go.set()
        record = await runtime.store.get_agent(worker.agent_id)
        events = await runtime.store.events(worker.agent_id)

    status = json.loads(waited)["status"][worker.agent_id]
    assert status["status"] == "failed"
    assert record is not None and record.error is not None
    assert record.error.startswith("the agent's instructions come to")
    assert str(workspace / "AGENTS.md") in record.error and "internal error" not in record.error
    answers = [e.payload for e in events if e.kind == "model_item"]
    assert any("3 apples" in json.dumps(a) for a in answers), "the first answer is kept"
