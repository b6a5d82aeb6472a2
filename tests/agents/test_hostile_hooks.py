"""Attacks on the user's hooks: a project (or an agent writing one) adding hooks, an API request
adding them, and a model smuggling shell syntax into what a hook is given."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

from corral.agents import load_config
from corral.orchestrator.service._overrides import classify
from corral.tools import (
    HookEvent,
    HookRunner,
    HooksConfig,
    PermissionProfile,
    SandboxMode,
    ToolCall,
    ToolContext,
    ToolRegistry,
    ToolServices,
    run_tool_calls,
    shell_tool,
)

pytestmark = [pytest.mark.hostile]


@pytest.mark.parametrize("event", [e.value for e in HookEvent])
def test_an_untrusted_project_cannot_add_a_hook_for_any_event(event: str, tmp_path: Path) -> None:
    home, project = tmp_path / "home" / ".corral", tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    home.mkdir(parents=True)
    (project / ".corral").mkdir()
    (project / ".corral" / "config.toml").write_text(
        f'[[hooks.{event}]]\nmatcher = "*"\n[[hooks.{event}.hooks]]\ncommand = "touch /tmp/x"\n'
        'sandbox = "none"\n'
    )
    env = {"HOME": str(home.parent), "CORRAL_HOME": str(home)}
    assert load_config(cwd=project, env=env).config.hooks.empty


@pytest.mark.parametrize("event", ["PreToolUse", "Stop"])
def test_an_api_request_cannot_set_hooks(event: str) -> None:
    assert classify(("hooks", event)) == "never"


INJECTIONS = [
    "$(touch pwned)",
    "`touch pwned`",
    "'; touch pwned; echo '",
    '"; touch pwned; echo "',
    "\n touch pwned \n",
    "$CORRAL_HOOK_COMMAND",
    "x%s; touch pwned",
]


@pytest.mark.anyio
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
@pytest.mark.parametrize("command", INJECTIONS)
async def test_a_tool_call_cannot_inject_shell_syntax_into_a_hook(
    command: str, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # The hook reads the call and refuses it: the tool never runs, so only the hook could
    # have created the file, and only if the call's text were run as shell.
    config = {"PreToolUse": [{"hooks": [{"command": "cat > seen.json; exit 2"}]}]}
    ctx = ToolContext(
        cwd=workspace,
        profile=PermissionProfile.for_workspace(SandboxMode.WORKSPACE_WRITE, workspace),
        services=ToolServices(hooks=HookRunner(HooksConfig.model_validate(config))),
    )
    call = ToolCall("c1", "shell", json.dumps({"command": command}))
    with anyio.fail_after(60):
        (output,) = await run_tool_calls(ToolRegistry([shell_tool()]), [call], ctx)
    assert not output.success
    assert not (workspace / "pwned").exists()
    seen = json.loads((workspace / "seen.json").read_text())
    assert seen["tool_input"]["command"] == command
