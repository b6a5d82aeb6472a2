"""Attacks on what a hook is given: a call padded until its payload cannot be handed to the
hook (one environment string holds at most 128 KiB), so that a hook meant to block it cannot
start and is ignored."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.tools import (
    CommandResult,
    HookEvent,
    HookRunner,
    HooksConfig,
    PermissionProfile,
    RecordingSandbox,
    SandboxMode,
    ToolCall,
    ToolContext,
    ToolRegistry,
    ToolServices,
    run_tool_calls,
    shell_tool,
)
from corral.tools._user_hooks import HookScope

from .sandbox_support import PYTHON, Layout, make_layout

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

DEADLINE = 60.0
ENV_STRING_LIMIT = 128 * 1024
# Blocks any call that touches a file, as a guard hook would.
NO_TOUCH = (
    f"{PYTHON} -c 'import json, sys; d = json.load(sys.stdin); "
    'c = d["tool_input"]["command"]; c = c if isinstance(c, str) else " ".join(c); '
    'sys.exit(2 if "touch" in c else 0)\''
)
PADDINGS = {
    "a-thousand-long-arguments": ["x" * 200] * 1_000,
    "a-hundred-thousand-tiny-arguments": ["x"] * 100_000,
    "many-short-arguments": ["y" * 100] * 2_000,
}


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
@pytest.mark.parametrize("padding", PADDINGS.values(), ids=PADDINGS.keys())
async def test_a_padded_call_is_still_shown_to_the_hook_that_blocks_it(
    padding: list[str], layout: Layout
) -> None:
    config = {"PreToolUse": [{"matcher": "shell", "hooks": [{"command": NO_TOUCH}]}]}
    ctx = ToolContext(
        cwd=layout.workspace,
        profile=layout.profile(),
        services=ToolServices(hooks=HookRunner(HooksConfig.model_validate(config))),
    )
    call = ToolCall("c1", "shell", json.dumps({"command": ["touch", "ran", *padding]}))
    with anyio.fail_after(DEADLINE):
        (output,) = await run_tool_calls(ToolRegistry([shell_tool()]), [call], ctx)
    assert [r.decision for r in output.hook_runs] == ["block"]
    assert not (layout.workspace / "ran").exists()


def _runner(event: HookEvent) -> HookRunner:
    return HookRunner(HooksConfig.model_validate({event.value: [{"hooks": [{"command": "x"}]}]}))


def _scope(tmp_path: Path, sandbox: RecordingSandbox) -> HookScope:
    profile = PermissionProfile.for_workspace(SandboxMode.READ_ONLY, tmp_path)
    return HookScope(cwd=tmp_path, profile=profile, sandbox=sandbox)


SHAPES: dict[str, Any] = {
    "long-list": {"command": ["git", "push", *(["z" * 300] * 2_000)]},
    "wide-table": {"command": "git push", **{f"k{i}": "v" * 50 for i in range(20_000)}},
    "long-string": {"command": "git push " + "w" * 1_000_000},
    "list-of-tables": {"command": "git push", "edits": [{"a": "b" * 100}] * 5_000},
}


@pytest.mark.parametrize("tool_input", SHAPES.values(), ids=SHAPES.keys())
async def test_a_payload_always_fits_one_environment_string_and_keeps_its_head(
    tool_input: dict[str, Any], tmp_path: Path
) -> None:
    sandbox = RecordingSandbox()
    payload = {"tool_name": "shell", "tool_input": tool_input}
    with anyio.fail_after(DEADLINE):
        await _runner(HookEvent.PRE_TOOL_USE).run(
            HookEvent.PRE_TOOL_USE, _scope(tmp_path, sandbox), payload
        )
    (call,) = sandbox.calls
    text = call.env["CORRAL_HOOK_INPUT"]
    assert len(text.encode()) < ENV_STRING_LIMIT
    shown = json.loads(text)["tool_input"]["command"]
    assert "git push" in (shown if isinstance(shown, str) else " ".join(shown[:2]))


def _too_nested() -> Any:
    tree: Any = "n" * 20
    for _ in range(5):
        tree = [tree] * 8
    return tree


@pytest.mark.parametrize(
    "event", [HookEvent.PRE_TOOL_USE, HookEvent.PERMISSION_REQUEST, HookEvent.USER_PROMPT_SUBMIT]
)
async def test_a_payload_that_cannot_be_given_to_a_blocking_hook_blocks(
    event: HookEvent, tmp_path: Path
) -> None:
    sandbox = RecordingSandbox(default=CommandResult(exit_code=0, output='{"decision": "allow"}'))
    payload = {"tool_input": {"command": _too_nested()}}
    with anyio.fail_after(DEADLINE):
        outcome = await _runner(event).run(event, _scope(tmp_path, sandbox), payload)
    assert outcome.blocked is not None and "too large" in outcome.blocked
    assert not outcome.allowed and sandbox.calls == []


async def test_an_observing_hook_that_cannot_be_given_its_payload_is_a_failed_run(
    tmp_path: Path,
) -> None:
    sandbox = RecordingSandbox()
    event = HookEvent.POST_TOOL_USE
    payload = {"tool_response": {"output": _too_nested()}}
    with anyio.fail_after(DEADLINE):
        outcome = await _runner(event).run(event, _scope(tmp_path, sandbox), payload)
    assert outcome.blocked is None and [r.decision for r in outcome.runs] == ["failed"]
