"""Exec runs on Temporal: an agent that compacts its history, recorded as a replayable history.

The supervisor scenarios (spawning, steering, cancelling) run on both executors in
`tests/scenarios/test_supervisor.py`. Each test here runs a time-skipping test server, a corral
worker in this process and the scripted model server, all on loopback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, RunSetup
from corral.orchestrator.temporal import ActivityPolicy, TemporalExecutor, TemporalSettings

from ._harness import WAIT, call, in_process_worker, outputs, record, time_skipping, user_texts

pytestmark = pytest.mark.anyio

POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
COMPACT_AT = 9000


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


SUMMARY = "SUMMARY: wrote big.txt twice"


def long_work(request: dict[str, Any]) -> Any:
    """One shell call with a long output, which forces a compaction, then a short one, then an
    answer; a summary whenever one is asked for."""
    if request.get("tool_choice") == "none":
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
    summaries = [r for r in requests if r.get("tool_choice") == "none"]
    assert summaries, "a summary was asked for"
    assert all(r["tools"] for r in summaries), "a summary keeps the agent's tools (cached prefix)"
    assert any(SUMMARY in "".join(user_texts(r)) for r in requests if r not in summaries)
    async with open_sqlite_store(home / "journal.sqlite") as store:
        kinds = [e.kind for e in await store.events(outcome.agent_id)]
    assert {"compaction_done", "compaction_prepared"} & set(kinds), kinds


def push_then_answer(request: dict[str, Any]) -> Any:
    if "push" in outputs(request):
        return "done"
    return [call("push", "shell", {"command": "touch pushed; git push"})]


async def test_a_pre_tool_use_hook_blocks_a_call_on_temporal_too(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    hook = {"hooks": [{"command": "echo 'no pushing'; exit 2"}], "matcher": "shell"}
    async with serve_model_server(push_then_answer) as model, time_skipping() as env:
        config = CorralConfig.model_validate(
            {"home": home, "base_url": model.base_url, "hooks": {"PreToolUse": [hook]}}
        )
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config,
                    ExecJob(task="push", cwd=workspace, run_id="run-hook"),
                    RunSetup(env={}),
                )
        answers = [outputs(r["normalised"]) for r in model.requests]
    assert outcome.finish.message == "done"
    assert answers[-1]["push"] == "A PreToolUse hook blocked this call: no pushing"
    assert not (workspace / "pushed").exists()
