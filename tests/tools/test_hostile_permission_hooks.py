"""Attacks on the user's `PermissionRequest` hooks: a model that wants an approval the hooks
would refuse picks another tool that asks for one. Every tool's approvals must reach the hooks
first, and a hook's refusal must end the ask before any approver hears of it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest

from corral.orchestrator.services.mcp._approvals import refusal_unless_approved
from corral.tools import (
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    CallbackApprover,
    CommandResult,
    ExecSessions,
    HookRunner,
    HooksConfig,
    PermissionProfile,
    RecordingSandbox,
    SandboxMode,
    ToolCall,
    ToolContext,
    ToolRegistry,
    ToolServices,
    exec_command_tool,
    run_tool_calls,
)

pytestmark = [pytest.mark.hostile, pytest.mark.anyio]

DEADLINE = 30.0
REFUSAL = "production is off limits"


async def _exec_command(ctx: ToolContext) -> str:
    call = ToolCall("c1", "exec_command", json.dumps({"cmd": "rm -rf build"}))
    registry = ToolRegistry([exec_command_tool(approval_timeout=5.0)])
    (output,) = await run_tool_calls(registry, [call], ctx)
    return output.text


async def _mcp_tool(ctx: ToolContext) -> str:
    refused = await refusal_unless_approved(
        ctx, "mcp__deploy__push", {"target": "prod"}, "the server marks this tool destructive"
    )
    assert refused is not None
    return refused.text


ASKERS: list[Callable[[ToolContext], Awaitable[str]]] = [_exec_command, _mcp_tool]


@pytest.mark.parametrize("ask", ASKERS, ids=lambda f: f.__name__.strip("_"))
async def test_a_permission_request_hook_refuses_every_tools_approval(
    ask: Callable[[ToolContext], Awaitable[str]], tmp_path: Path
) -> None:
    asked: list[str] = []

    def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request.command)
        return ApprovalDecision.approve("a tired human")

    # The hook's run, as the sandbox would report it: exit code 2 refuses.
    sandbox = RecordingSandbox(default=CommandResult(exit_code=2, output=REFUSAL))
    hooks = HookRunner(
        HooksConfig.model_validate({"PermissionRequest": [{"hooks": [{"command": "guard"}]}]})
    )
    ctx = ToolContext(
        cwd=tmp_path,
        profile=PermissionProfile.for_workspace(
            SandboxMode.WORKSPACE_WRITE, tmp_path, approval=ApprovalPolicy.UNTRUSTED
        ),
        services=ToolServices(
            sandbox=sandbox,
            approver=CallbackApprover(approve),
            hooks=hooks,
            exec_sessions=ExecSessions(),
        ),
    )
    with anyio.fail_after(DEADLINE):
        text = await ask(ctx)
    assert asked == [], "the approver was asked although a PermissionRequest hook refused"
    assert f"a PermissionRequest hook refused: {REFUSAL}" in text
    assert [json.loads(c.env["CORRAL_HOOK_INPUT"])["hook_event_name"] for c in sandbox.calls] == [
        "PermissionRequest"
    ]
