"""MCP tool calls under the approval policy: the tool's annotations are the defaults, Codex's
per-server and per-tool keys override them, and a call that needs an approval nobody gives
never reaches the server."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from corral.agents import McpApprovalMode, McpToolConfig
from corral.orchestrator.services.mcp import McpManager, open_mcp_manager
from corral.tools import (
    ApprovalDecision,
    ApprovalKind,
    ApprovalPolicy,
    ApprovalRequest,
    CallbackApprover,
    PermissionProfile,
    ToolCall,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    ToolServices,
)

from .mcp_servers import annotated_server

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]
WAIT = 30.0


class Recorder:
    """Answers every ask with `approve` and keeps what was asked."""

    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.asked: list[ApprovalRequest] = []

    def __call__(self, req: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(req)
        return ApprovalDecision(self.approve, "ok" if self.approve else "no thanks")


async def call(
    manager: McpManager, tmp_path: Path, tool: str, policy: ApprovalPolicy, recorder: Recorder
) -> ToolOutput:
    registry = ToolRegistry()
    manager.attach(registry)
    ctx = ToolContext(
        cwd=tmp_path,
        profile=PermissionProfile(approval=policy),
        services=ToolServices(approver=CallbackApprover(recorder)),
        agent_id="agent-1",
        approval_timeout=5.0,
    )
    arguments = json.dumps({"target": "everything"})
    return await registry.dispatch(ToolCall("c1", f"mcp__srv__{tool}", arguments), ctx)


ON_REQUEST, UNTRUSTED, NEVER = (
    ApprovalPolicy.ON_REQUEST,
    ApprovalPolicy.UNTRUSTED,
    ApprovalPolicy.NEVER,
)


@pytest.mark.parametrize(
    ("tool", "policy", "asks"),
    [
        ("peek", ON_REQUEST, False),
        ("peek", UNTRUSTED, False),
        ("wipe", ON_REQUEST, True),
        ("wipe", ApprovalPolicy.ON_FAILURE, True),
        ("wipe", UNTRUSTED, True),
        ("fetch", ON_REQUEST, True),
        ("plain", ON_REQUEST, False),
        ("plain", UNTRUSTED, True),
        ("wipe", NEVER, False),
    ],
)
async def test_annotations_decide_who_asks_and_a_denial_never_reaches_the_server(
    tmp_path: Path, tool: str, policy: ApprovalPolicy, asks: bool
) -> None:
    denier = Recorder(approve=False)
    with anyio.fail_after(WAIT):
        async with open_mcp_manager({"srv": annotated_server()}) as manager:
            out = await call(manager, tmp_path, tool, policy, denier)
    if asks:
        assert not out.success
        assert out.text == f"mcp__srv__{tool} was not called: approval was denied (no thanks)"
        (asked,) = denier.asked
        assert asked.kind is ApprovalKind.MCP_TOOL and asked.agent_id == "agent-1"
        assert asked.command == f'mcp__srv__{tool} {{"target": "everything"}}'
    else:
        assert out == ToolOutput(f"{tool} ran")
        assert denier.asked == []


@pytest.mark.parametrize(
    ("server_mode", "tool_mode", "tool", "asks"),
    [
        ("prompt", None, "peek", True),
        ("approve", None, "wipe", False),
        ("auto", "prompt", "peek", True),
        ("approve", "prompt", "wipe", True),
        ("prompt", "approve", "wipe", False),
    ],
)
async def test_the_per_server_and_per_tool_keys_override_the_annotations(
    tmp_path: Path,
    server_mode: McpApprovalMode,
    tool_mode: McpApprovalMode | None,
    tool: str,
    asks: bool,
) -> None:
    config = annotated_server(
        default_tools_approval_mode=server_mode,
        tools={tool: McpToolConfig(approval_mode=tool_mode)},
    )
    denier = Recorder(approve=False)
    with anyio.fail_after(WAIT):
        async with open_mcp_manager({"srv": config}) as manager:
            out = await call(manager, tmp_path, tool, ON_REQUEST, denier)
    assert out.success is not asks
    assert bool(denier.asked) is asks


async def test_an_approved_destructive_call_runs_once(tmp_path: Path) -> None:
    approver = Recorder(approve=True)
    with anyio.fail_after(WAIT):
        async with open_mcp_manager({"srv": annotated_server()}) as manager:
            out = await call(manager, tmp_path, "wipe", ON_REQUEST, approver)
    assert out == ToolOutput("wipe ran")
    assert len(approver.asked) == 1
