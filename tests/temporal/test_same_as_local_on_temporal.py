"""What the local executor does for every agent, done the same on Temporal through the same code:
a tool's output journaled as the model saw it, capped, with its size and hash; the user's
lifecycle hooks (`docs/hooks.md`) fired at an agent's start, prompts and end.

Each test runs a time-skipping test server, a corral worker in this process and the scripted
model server, all on loopback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, FanoutJob, RunSetup, SingleOutcome
from corral.orchestrator.supervisor import collab_tool_providers
from corral.orchestrator.temporal import ActivityPolicy, TemporalExecutor, TemporalSettings
from tests._scripted import Supervise

from ._harness import WAIT, call, in_process_worker, outputs, record, time_skipping
from .test_fanout_on_temporal import SCHEMA, TEMPLATE, scripted

pytestmark = pytest.mark.anyio

POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
CAP = 2048
FLOOD = 60_000


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


async def run_on_temporal(
    settings: dict[str, Any],
    script: Any,
    workspace: Path,
    home: Path,
    run_id: str,
    history: str | None = None,
) -> tuple[SingleOutcome, list[dict[str, Any]]]:
    """Run one exec agent under `settings` on Temporal; its outcome and the requests the model
    was sent (normalised). With `history`, its workflow histories replay at once (and are
    recorded under that name with `CORRAL_RECORD_HISTORIES=1`)."""
    async with serve_model_server(script) as model, time_skipping() as env:
        config = CorralConfig.model_validate({"home": home, "base_url": model.base_url, **settings})
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config, ExecJob(task="go", cwd=workspace, run_id=run_id), RunSetup(env={})
                )
            if history is not None:
                await record(env.client, run_id, history)
        return outcome, [r["normalised"] for r in model.requests]


def flood_then_answer(request: dict[str, Any]) -> Any:
    if "flood" in outputs(request):
        return "done"
    return [call("flood", "shell", {"command": f"head -c {FLOOD} /dev/zero | tr '\\0' x"})]


async def test_a_large_tool_output_is_journaled_capped_with_its_size_and_hash_on_temporal(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    settings = {"journal": {"max_tool_output_bytes": CAP}, "tool_output_token_limit": 100_000}
    outcome, requests = await run_on_temporal(
        settings, flood_then_answer, workspace, home, "run-flood"
    )
    assert outcome.finish.message == "done"
    async with open_sqlite_store(home / "journal.sqlite") as store:
        results = [e.payload for e in await store.events(outcome.agent_id)]
        ledger = await store.ledger(outcome.agent_id)
    (result,) = [p for p in results if p["kind"] == "tool_result"]
    journaled = result["output"]
    assert len(journaled.encode()) <= CAP, "cut to [journal] max_tool_output_bytes"
    assert journaled == outputs(requests[-1])["flood"], "journaled as the model saw it"
    whole = result["total_bytes"]
    assert whole is not None and whole > 8 * CAP, "the size is of the whole output"
    assert result["sha256"] is not None and len(result["sha256"]) == 64
    assert [e.output for e in ledger] == [journaled], "the ledger keeps no more than the journal"


def hook(event: str, command: str) -> dict[str, Any]:
    return {event: [{"hooks": [{"command": command}]}]}


APPEND = "{ cat; echo; } >> %s"


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


FROZEN = """echo '{"additionalContext": "the release is frozen"}'"""
FROZEN_CONTEXT = "<hook_context>\nSessionStart: the release is frozen\n</hook_context>"


def user_text(request: dict[str, Any]) -> str:
    return "".join(
        part.get("text", "")
        for item in request["input"]
        if item.get("type") == "message" and item.get("role") == "user"
        for part in item["content"]
    )


async def journal_of(home: Path, agent_id: str) -> list[dict[str, Any]]:
    async with open_sqlite_store(home / "journal.sqlite") as store:
        return [{"kind": e.kind, **e.payload} for e in await store.events(agent_id)]


async def test_start_prompt_and_stop_hooks_run_on_temporal_as_they_do_locally(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    hooks = {
        **hook("SessionStart", FROZEN),
        **hook("UserPromptSubmit", "cat > prompt.json"),
        **hook("Stop", "cat > stop.json"),
    }
    outcome, requests = await run_on_temporal(
        {"hooks": hooks}, lambda request: "all done", workspace, home, "run-hooks", "hooks"
    )
    assert outcome.finish.message == "all done"
    assert FROZEN_CONTEXT in user_text(requests[0]), "SessionStart's context reached the model"
    prompt = json.loads((workspace / "prompt.json").read_text())
    assert (prompt["hook_event_name"], prompt["prompt"]) == ("UserPromptSubmit", "go")
    stop = json.loads((workspace / "stop.json").read_text())
    assert (stop["hook_event_name"], stop["status"]) == ("Stop", "completed")
    assert stop["last_assistant_message"] == "all done"
    journal = await journal_of(home, outcome.agent_id)
    ran = [(e["event"], e["decision"]) for e in journal if e["kind"] == "hook_ran"]
    assert ran == [
        ("SessionStart", "context"),
        ("UserPromptSubmit", "observe"),
        ("Stop", "observe"),
    ]
    kinds = [e["kind"] for e in journal]
    assert kinds[:3] == ["hook_ran", "hook_ran", "user_input"], "start hooks come before the task"


async def test_a_prompt_a_hook_blocks_never_reaches_the_model_on_temporal(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    hooks = {
        **hook("UserPromptSubmit", "echo 'not during the freeze'; exit 2"),
        **hook("Stop", "cat > stop.json"),
    }
    outcome, requests = await run_on_temporal(
        {"hooks": hooks}, lambda request: "never asked", workspace, home, "run-blocked"
    )
    assert requests == []
    assert str(outcome.finish.status) == "failed"
    assert outcome.finish.error == (
        "a UserPromptSubmit hook blocked the prompt: not during the freeze"
    )
    assert json.loads((workspace / "stop.json").read_text())["status"] == "failed"
    journal = await journal_of(home, outcome.agent_id)
    assert "user_input" not in [e["kind"] for e in journal], "the blocked task is never fed"


SUMMARY = "SUMMARY: wrote a lot"


MOST_STEPS = 40


def grow_until_summarised(request: dict[str, Any]) -> Any:
    """Shell calls of about 750 tokens each, so the history crosses the early limit (where a
    summary is prepared in the background) before the compaction limit; then an answer."""
    if request.get("tool_choice") == "none":
        return SUMMARY
    done = len(outputs(request))
    if SUMMARY in user_text(request) or done >= MOST_STEPS:
        return "finished after compacting"
    return [call(f"step-{done}", "shell", {"command": "head -c 3000 /dev/zero | tr '\\0' y"})]


async def test_compaction_hooks_run_around_each_summary_on_temporal(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    hooks = {**hook("PreCompact", APPEND % "c.jsonl"), **hook("PostCompact", APPEND % "c.jsonl")}
    settings = {"hooks": hooks, "model_auto_compact_token_limit": 9000}
    outcome, _ = await run_on_temporal(
        settings, grow_until_summarised, workspace, home, "run-compact-hooks", "compaction_hooks"
    )
    assert outcome.finish.message == "finished after compacting"
    fired = [(s["hook_event_name"], s["trigger"]) for s in lines_of(workspace / "c.jsonl")]
    assert fired[:2] == [("PreCompact", "early"), ("PostCompact", "early")], fired
    journal = await journal_of(home, outcome.agent_id)
    ran = [(e["event"], e["decision"]) for e in journal if e["kind"] == "hook_ran"]
    assert ran[:2] == [("PreCompact", "observe"), ("PostCompact", "observe")]


async def test_a_fanouts_workers_fire_their_start_and_stop_hooks_on_temporal(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    hooks = {
        **hook("SessionStart", APPEND % "starts.jsonl"),
        **hook("Stop", APPEND % "stops.jsonl"),
    }
    async with serve_model_server(scripted) as model, time_skipping() as env:
        config = CorralConfig.model_validate(
            {"home": home, "base_url": model.base_url, "hooks": hooks}
        )
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            job = FanoutJob(
                items=({"n": 0}, {"n": 1}),
                template=TEMPLATE,
                result_schema=SCHEMA,
                cwd=workspace,
                concurrency=1,
                run_id="run-fanout-hooks",
            )
            with anyio.fail_after(WAIT):
                done = await ex.run_fanout(config, job)
    assert [i.status for i in done.outcome.items] == ["done", "done"]
    agents = {i.agent_id for i in done.outcome.items}
    starts, stops = lines_of(workspace / "starts.jsonl"), lines_of(workspace / "stops.jsonl")
    assert {s["session_id"] for s in starts} == agents
    assert {s["session_id"] for s in stops} == agents
    assert {s["status"] for s in stops} == {"completed"}


async def test_a_supervisors_worker_fires_subagent_start_and_stop_on_temporal(
    workspace: Path, tmp_path: Path
) -> None:
    home, seen = tmp_path / "home", tmp_path / "hooks.jsonl"
    unconfined = {"command": APPEND % seen, "sandbox": "none"}  # the worker is read-only
    hooks = {
        event: [{"hooks": [unconfined]}] for event in ("SubagentStart", "SubagentStop", "Stop")
    }
    worker = {"spawn-a": {"message": "review a.py", "role": "reviewer", "sandbox": "read-only"}}
    script = Supervise(worker, last="reviewed")
    async with serve_model_server(script) as model, time_skipping() as env:
        config = CorralConfig.model_validate(
            {"home": home, "base_url": model.base_url, "hooks": hooks}
        )
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            job = ExecJob(task="review", cwd=workspace, run_id="run-sub", role="supervisor")
            with anyio.fail_after(WAIT):
                setup = RunSetup(env={}, tool_providers=collab_tool_providers())
                outcome = await ex.run_single(config, job, setup)
            await record(env.client, "run-sub", "subagent_hooks")  # replays deterministically
    assert outcome.finish.message == "reviewed"
    fired = [(s["hook_event_name"], s["session_id"]) for s in lines_of(seen)]
    (child,) = {agent for event, agent in fired if event == "SubagentStart"}
    assert fired == [
        ("SubagentStart", child),
        ("SubagentStop", child),
        ("Stop", outcome.agent_id),
    ]
    start = lines_of(seen)[0]
    assert (start["agent_type"], start["parent_id"]) == ("reviewer", outcome.agent_id)


async def test_a_supervisors_worker_of_a_config_role_runs_as_it_does_locally_on_temporal(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    auditor = {
        "description": "checks licences",
        "instructions": "List every licence you find.",
        "model": "audit-model",
        "sandbox_mode": "danger-full-access",
    }
    script = Supervise({"spawn-a": {"message": "audit", "role": "auditor"}}, last="audited")
    async with serve_model_server(script) as model, time_skipping() as env:
        run = {"home": home, "base_url": model.base_url, "sandbox_mode": "read-only"}
        config = CorralConfig.model_validate({**run, "agents": {"roles": {"auditor": auditor}}})
        # The worker host's own config has no roles: the run's travel with its workflows.
        async with in_process_worker(env.client, CorralConfig.model_validate(run)):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            job = ExecJob(task="audit it", cwd=workspace, run_id="run-role", role="supervisor")
            with anyio.fail_after(WAIT):
                setup = RunSetup(env={}, tool_providers=collab_tool_providers())
                outcome = await ex.run_single(config, job, setup)
        requests = [r["normalised"] for r in model.requests]
    assert outcome.finish.message == "audited"
    (worker,) = [r for r in requests if r["model"] == "audit-model"]
    assert worker["instructions"].endswith("# Your role: auditor\n\nList every licence you find.\n")
    assert "## Sandbox: read-only" in json.dumps(worker["input"])
    spawn = next(t for t in requests[0]["tools"] if t["name"] == "spawn_agent")
    assert "auditor: checks licences" in spawn["parameters"]["properties"]["role"]["description"]
