"""When an agent's MCP tool call needs someone's approval, and asking for it.

Codex's keys decide first: a tool's `approval_mode`, else its server's
`default_tools_approval_mode` (`approve`: never ask; `prompt`: always ask). Under `auto`, the
tool's own annotations are the defaults: a tool hinted read-only (and not destructive) runs
unasked; one hinted destructive or open-world asks unless the approval policy is `never`; an
unannotated one asks under `untrusted`. The ask goes through the agent's approver, the same one
that answers shell escalations, with the agent's approval deadline; silence is a denial.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from corral.agents import McpApprovalMode
from corral.tools import (
    ApprovalKind,
    ApprovalPolicy,
    ApprovalRequest,
    DenyAllApprover,
    ToolContext,
    ToolOutput,
    approve_with_hooks,
)

# How much of the arguments the approval question shows (the decision covers all of them).
_SHOWN_ARGUMENTS = 2_000


def approval_reason(
    mode: McpApprovalMode, hints: types.ToolAnnotations | None, policy: ApprovalPolicy
) -> str | None:
    """Why this call must be approved first, or None when it may run unasked."""
    if mode == "approve":
        return None
    if mode == "prompt":
        return "this MCP tool is configured to ask every time (approval_mode = prompt)"
    if hints is not None and hints.read_only_hint is True and hints.destructive_hint is not True:
        return None
    if policy is ApprovalPolicy.NEVER:
        return None
    if hints is not None and hints.destructive_hint is True:
        return "the server marks this tool destructive"
    if hints is not None and hints.open_world_hint is True:
        return "the server marks this tool as reaching outside (open world)"
    if policy is ApprovalPolicy.UNTRUSTED:
        return "the server does not mark this tool read-only"
    return None


async def refusal_unless_approved(
    ctx: ToolContext, exposed: str, arguments: dict[str, Any], reason: str
) -> ToolOutput | None:
    """Ask the agent's approver about this call; a failed output when it is not approved."""
    shown = json.dumps(arguments, ensure_ascii=False)
    if len(shown) > _SHOWN_ARGUMENTS:
        shown = shown[:_SHOWN_ARGUMENTS] + f"... ({len(shown)} characters in all)"
    request = ApprovalRequest(
        tool=exposed,
        command=f"{exposed} {shown}",
        cwd=ctx.cwd,
        reason=reason,
        kind=ApprovalKind.MCP_TOOL,
        agent_id=ctx.agent_id,
    )
    approver = ctx.services.approver or DenyAllApprover("nobody is there to approve MCP tool calls")
    decision = await approve_with_hooks(ctx, request, approver, within=ctx.approval_timeout)
    if decision.approved:
        return None
    return ToolOutput.error(f"{exposed} was not called: approval was denied ({decision.reason})")
