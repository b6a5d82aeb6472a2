"""The user's hooks in a whole `corral exec` run: the real CLI, a scripted model over HTTP, real
bubblewrap. What the model is sent shows what the hooks did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server
from tests._trust import trust_project
from tests.tools.sandbox_support import PYTHON  # the real interpreter: the sandbox hides /tmp

from ._cli import corral_env, run_corral

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

NO_PUSH = """
import json, sys
call = json.load(sys.stdin)
if "git push" in str(call["tool_input"].get("command")):
    print(json.dumps({"decision": "block", "reason": "agents never push; open a PR instead"}))
"""
HOOKS = f"""
[[hooks.PreToolUse]]
matcher = "shell"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "{PYTHON} {{script}}"

[[hooks.SessionStart]]
[[hooks.SessionStart.hooks]]
command = "echo '{{{{\\"additionalContext\\": \\"the release is frozen\\"}}}}'"

[[hooks.Stop]]
[[hooks.Stop.hooks]]
command = "cat > stop-summary.json"
"""


def function_outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def push_then_finish(request: dict[str, Any]) -> Any:
    if function_outputs(request):
        return "could not push"
    arguments = json.dumps({"command": "touch pushed; git push origin main"})
    return [{"type": "function_call", "call_id": "c1", "name": "shell", "arguments": arguments}]


def all_text(request: dict[str, Any]) -> str:
    return json.dumps(request["normalised"]["input"])


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / ".git").mkdir(parents=True)
    (root / "no_push.py").write_text(NO_PUSH)
    return root


async def test_user_hooks_block_a_push_add_context_and_see_the_end(
    tmp_path: Path, work: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(HOOKS.format(script=work / "no_push.py"))
    async with serve_model_server(push_then_finish) as server:
        env = corral_env(home, server.base_url)
        done = await run_corral(["exec", "--run-id", "run-hooks", "push it"], env=env, cwd=work)
        assert done.code == 0, done.stderr
        first, second = server.requests[0], server.requests[1]
    assert "<hook_context>\\nSessionStart: the release is frozen\\n</hook_context>" in all_text(
        first
    )
    (answer,) = function_outputs(second["normalised"])
    assert answer == "A PreToolUse hook blocked this call: agents never push; open a PR instead"
    assert not (work / "pushed").exists()
    summary = json.loads((work / "stop-summary.json").read_text())
    assert summary["hook_event_name"] == "Stop"
    assert summary["last_assistant_message"] == "could not push"
    exported = await run_corral(["export", "run-hooks"], env=env, cwd=work)
    events = [json.loads(line) for line in exported.stdout.splitlines()]
    kinds = [e.get("kind") for e in events if e.get("type") == "event"]
    assert kinds.count("hook_ran") == 2  # SessionStart and Stop; PreToolUse rides on the result
    results = [e for e in events if e.get("kind") == "tool_result"]
    assert [r["payload"]["hook_runs"][0]["decision"] for r in results] == ["block"]


async def test_hooks_from_an_untrusted_project_do_not_run(tmp_path: Path, work: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project_hooks = '[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ncommand = "touch ran"\n'
    (work / ".corral").mkdir()
    (work / ".corral" / "config.toml").write_text(project_hooks)
    async with serve_model_server(lambda r: "done") as server:
        env = corral_env(home, server.base_url)
        done = await run_corral(["exec", "go"], env=env, cwd=work)
        assert done.code == 0, done.stderr
        assert not (work / "ran").exists()
        assert "hooks" in done.stderr and "corral trust" in done.stderr
        trust_project(home, work)
        trusted = await run_corral(["exec", "go"], env=env, cwd=work)
        assert trusted.code == 0, trusted.stderr
    assert (work / "ran").exists()
