"""Hooks around tool calls: `PreToolUse` may block a call, `PostToolUse` may add to its answer,
`PermissionRequest` may answer an approval before anyone is asked.

`dispatch_with_hooks` is what both executors call for each tool call (through
`run_tool_calls`), so hooks behave the same wherever an agent runs. The runs of one call,
permission hooks included, are collected in a context variable and returned on the call's
`ToolOutput` (`hook_runs`), which the drivers journal and trace.
"""

from __future__ import annotations

import dataclasses
import json
from contextvars import ContextVar
from typing import Any

from .._approval import ApprovalDecision, ApprovalRequest, Approver, request_approval
from .._hook_model import HookEvent, HookRun
from .._registry import ToolCall, ToolContext, ToolOutput, ToolRegistry
from .._sandbox import BubblewrapSandbox, Sandbox
from ._run import HookOutcome, HookRunner, HookScope

_CALL_RUNS: ContextVar[list[HookRun] | None] = ContextVar("corral_hook_runs", default=None)


def hook_scope(ctx: ToolContext, sandbox: Sandbox | None = None) -> HookScope:
    """Where the hooks of `ctx`'s agent run: its folder, profile and sandbox."""
    chosen = sandbox or ctx.services.sandbox or BubblewrapSandbox()
    base = {"session_id": ctx.agent_id, "cwd": str(ctx.cwd)}
    return HookScope(cwd=ctx.cwd, profile=ctx.profile, sandbox=chosen, base=base)


async def dispatch_with_hooks(
    registry: ToolRegistry, call: ToolCall, ctx: ToolContext
) -> ToolOutput:
    """Run `call` between its `PreToolUse` and `PostToolUse` hooks (none configured: as is)."""
    hooks: HookRunner | None = ctx.services.hooks
    if hooks is None:
        return await registry.dispatch(call, ctx)
    collected: list[HookRun] = []
    token = _CALL_RUNS.set(collected)
    try:
        output = await _hooked(hooks, registry, call, ctx, collected)
    finally:
        _CALL_RUNS.reset(token)
    failed = [r for r in collected if r.decision in ("failed", "timeout")]
    text = output.text + "".join(
        f"\n(a {r.event.value} hook {r.decision}: {r.reason}; it was ignored)" for r in failed
    )
    return dataclasses.replace(output, text=text, hook_runs=tuple(collected))


async def _hooked(
    hooks: HookRunner,
    registry: ToolRegistry,
    call: ToolCall,
    ctx: ToolContext,
    collected: list[HookRun],
) -> ToolOutput:
    scope = hook_scope(ctx)
    payload = {"tool_name": call.name, "tool_input": _input_of(call), "tool_use_id": call.call_id}
    pre = await hooks.run(HookEvent.PRE_TOOL_USE, scope, payload, subject=call.name)
    collected.extend(pre.runs)
    if pre.blocked is not None:
        return ToolOutput.error(f"A PreToolUse hook blocked this call: {pre.blocked}")
    output = await registry.dispatch(call, ctx)
    response = {"output": output.text, "success": output.success}
    post = await hooks.run(
        HookEvent.POST_TOOL_USE, scope, {**payload, "tool_response": response}, subject=call.name
    )
    collected.extend(post.runs)
    return _after_post(output, post)


def _after_post(output: ToolOutput, post: HookOutcome) -> ToolOutput:
    notes = [f"\n(a PostToolUse hook says: {post.blocked})"] if post.blocked else []
    notes += [f"\n(context from a PostToolUse hook: {c})" for c in post.context]
    return dataclasses.replace(output, text=output.text + "".join(notes)) if notes else output


async def permission_by_hooks(
    hooks: HookRunner, scope: HookScope, req: ApprovalRequest
) -> ApprovalDecision | None:
    """What `PermissionRequest` hooks answer for `req`: a denial, an approval, or None (ask)."""
    payload = {
        "tool_name": req.tool,
        "tool_input": {"command": req.command},
        "reason": req.reason,
        "kind": str(req.kind),
    }
    outcome = await hooks.run(HookEvent.PERMISSION_REQUEST, scope, payload, subject=req.tool)
    runs = _CALL_RUNS.get()
    if runs is not None:
        runs.extend(outcome.runs)
    if outcome.blocked is not None:
        return ApprovalDecision.deny(f"a PermissionRequest hook refused: {outcome.blocked}")
    if outcome.allowed:
        return ApprovalDecision.approve("approved by a PermissionRequest hook")
    return None


def _input_of(call: ToolCall) -> Any:
    try:
        return json.loads(call.arguments) if call.arguments.strip() else {}
    except (ValueError, RecursionError):  # the model's text, as unreadable as it may be
        return call.arguments


async def approve_with_hooks(
    ctx: ToolContext, req: ApprovalRequest, approver: Approver, *, within: float
) -> ApprovalDecision:
    """What `req` gets: the agent's `PermissionRequest` hooks' answer, else `approver`'s.

    Every tool that asks for approval goes through here (or, for `shell`, through
    `permission_by_hooks` itself), so a model cannot pick a tool whose approvals skip the
    user's hooks."""
    hooks: HookRunner | None = ctx.services.hooks
    if hooks is not None:
        decided = await permission_by_hooks(hooks, hook_scope(ctx), req)
        if decided is not None:
            return decided
    observer = ctx.services.approval_observer
    return await request_approval(approver, req, answer_within=within, on_wait=observer)
