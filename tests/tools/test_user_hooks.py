"""The user's hooks around tool calls, with real bubblewrap: blocking, context, failures.

Hook commands are small Python scripts reading the event's JSON on stdin, as a user's would.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.tools import (
    ApprovalPolicy,
    CallbackApprover,
    HookRunner,
    HooksConfig,
    PermissionProfile,
    SandboxMode,
    ToolCall,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    ToolServices,
    run_tool_calls,
    shell_tool,
)

from .sandbox_support import PYTHON, Layout, make_layout

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

DEADLINE = 60.0
NO_PUSH = (
    f"{PYTHON} -c 'import json, sys; d = json.load(sys.stdin); "
    'c = d["tool_input"]["command"]; '
    'print(json.dumps({"decision": "block", "reason": "agents never push; open a PR"}) '
    'if "git push" in str(c) else "{}")\''
)


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


def hooks(**events: list[dict[str, Any]]) -> HookRunner:
    return HookRunner(HooksConfig.model_validate(events))


def group(command: str, matcher: str = "shell", **extra: Any) -> dict[str, Any]:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command, **extra}]}


async def run_shell(
    layout: Layout, runner: HookRunner, command: str, **services: Any
) -> ToolOutput:
    ctx = ToolContext(
        cwd=layout.workspace,
        profile=services.pop("profile", layout.profile()),
        services=ToolServices(hooks=runner, **services),
        agent_id="agent-1",
    )
    call = ToolCall("c1", "shell", json.dumps({"command": command}))
    with anyio.fail_after(DEADLINE):
        (output,) = await run_tool_calls(ToolRegistry([shell_tool()]), [call], ctx)
    return output


async def test_a_pre_tool_use_hook_blocks_a_matching_shell_call_and_says_why(
    layout: Layout,
) -> None:
    runner = hooks(PreToolUse=[group(NO_PUSH)])
    blocked = await run_shell(layout, runner, "touch pushed && git push origin main")
    assert not blocked.success
    assert blocked.text == "A PreToolUse hook blocked this call: agents never push; open a PR"
    assert not (layout.workspace / "pushed").exists()
    (run,) = blocked.hook_runs
    assert (run.event, run.decision, run.exit_code) == ("PreToolUse", "block", 0)
    allowed = await run_shell(layout, runner, "touch fine")
    assert allowed.success and (layout.workspace / "fine").exists()
    assert [r.decision for r in allowed.hook_runs] == ["observe"]


async def test_exit_code_two_blocks_with_the_hooks_output_as_the_reason(layout: Layout) -> None:
    runner = hooks(PreToolUse=[group("echo 'not on Fridays'; exit 2")])
    output = await run_shell(layout, runner, "touch x")
    assert output.text.endswith("not on Fridays")
    assert not (layout.workspace / "x").exists()


async def test_a_matcher_that_does_not_match_the_tool_runs_no_hook(layout: Layout) -> None:
    runner = hooks(PreToolUse=[group("exit 2", matcher="apply_patch|grep")])
    output = await run_shell(layout, runner, "true")
    assert output.success and output.hook_runs == ()


async def test_a_failing_or_timing_out_hook_is_reported_and_the_call_goes_on(
    layout: Layout,
) -> None:
    runner = hooks(PreToolUse=[group("echo broken >&2; exit 7"), group("sleep 30", timeout=0.5)])
    output = await run_shell(layout, runner, "touch ran")
    assert (layout.workspace / "ran").exists()
    assert [r.decision for r in output.hook_runs] == ["failed", "timeout"]
    assert "(a PreToolUse hook failed: exit code 7: broken; it was ignored)" in output.text
    assert "(a PreToolUse hook timeout: no answer within 0.5 s; it was ignored)" in output.text


async def test_a_post_tool_use_hook_sees_the_output_and_adds_context(layout: Layout) -> None:
    script = (
        f"{PYTHON} -c 'import json, sys; d = json.load(sys.stdin); "
        'print(json.dumps({"hookSpecificOutput": {"additionalContext": '
        '"saw " + d["tool_response"]["output"].split()[-1]}}))\''
    )
    runner = hooks(PostToolUse=[group(script)])
    output = await run_shell(layout, runner, "echo marker-42")
    assert output.text.endswith("(context from a PostToolUse hook: saw marker-42)")


async def test_hooks_run_in_the_agents_sandbox_unless_configured_otherwise(
    layout: Layout,
) -> None:
    write_outside = f"touch {layout.outside}/from-hook"
    read_only = layout.profile(SandboxMode.READ_ONLY)
    confined = hooks(PreToolUse=[group(write_outside)])
    await run_shell(layout, confined, "true", profile=read_only)
    assert not (layout.outside / "from-hook").exists()
    unconfined = hooks(PreToolUse=[group(write_outside, sandbox="none")])
    await run_shell(layout, unconfined, "true", profile=read_only)
    assert (layout.outside / "from-hook").exists()


async def test_a_permission_request_hook_denies_before_anyone_is_asked(layout: Layout) -> None:
    asked: list[str] = []

    async def approve(request: Any) -> Any:
        asked.append(request.command)
        raise AssertionError("the hook should have answered")

    profile = PermissionProfile.for_workspace(
        SandboxMode.WORKSPACE_WRITE, layout.workspace, approval=ApprovalPolicy.UNTRUSTED
    )
    runner = hooks(PermissionRequest=[group("echo 'ask the owner instead'; exit 2")])
    output = await run_shell(
        layout, runner, "touch x", profile=profile, approver=CallbackApprover(approve)
    )
    assert "a PermissionRequest hook refused: ask the owner instead" in output.text
    assert asked == []
    assert [r.event for r in output.hook_runs] == ["PermissionRequest"]


async def test_a_hook_gets_only_the_variables_it_names(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_TOKEN", "t-123")
    monkeypatch.setenv("OTHER_SECRET", "s-456")
    show = "echo token=$HOOK_TOKEN other=$OTHER_SECRET; exit 2"
    runner = hooks(PreToolUse=[group(show, env_vars=["HOOK_TOKEN"])])
    output = await run_shell(layout, runner, "true")
    assert output.text.endswith("token=t-123 other=")


def test_a_matcher_that_is_no_regular_expression_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a regular expression"):
        HooksConfig.model_validate({"Stop": [{"matcher": "(", "hooks": []}]})
