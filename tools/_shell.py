"""The `shell` tool: run a command in the sandbox, ask for approval where the policy says so.

The sandbox (`ctx.services.sandbox`, default bubblewrap) enforces the profile; this module
decides when to ask the approver (`ctx.services.approver`, default deny-all) and renders the
result in Codex's freeform style (`Exit code`, `Wall time`, `Total output lines`, `Output:`).
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._approval import (
    APPROVAL_TIMEOUT,
    ApprovalDecision,
    ApprovalKind,
    ApprovalRequest,
    DenyAllApprover,
    request_approval,
)
from ._errors import InvalidInput
from ._permissions import ApprovalPolicy, PermissionProfile, SandboxMode
from ._registry import Tool, ToolContext, ToolOutput
from ._safe_commands import is_known_safe_command, looks_like_sandbox_denial
from ._sandbox import BubblewrapSandbox, CommandResult, Sandbox
from ._truncate import APPROX_BYTES_PER_TOKEN
from ._user_hooks import hook_scope, permission_by_hooks

SHELL_TOOL_NAME = "shell"
DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 600_000
DEFAULT_MAX_OUTPUT_TOKENS = 10_000
# Room kept for the header lines and the truncation marker, so the whole answer fits the budget
# and the agent's own truncation at the same limit never cuts it a second time.
_HEADER_RESERVE_TOKENS = 64

_DESCRIPTION = (
    "Runs a command and returns its exit code and output (stdout and stderr together).\n"
    '- `command`: a list of arguments run directly (e.g. ["rg", "-n", "TODO"]), or a string'
    " run by `bash -c` when you need pipes or other shell syntax.\n"
    "- Always set `workdir` (relative to the current directory) instead of using `cd`.\n"
    "- Commands run in a sandbox limited by your permissions; a command that runs longer than"
    " `timeout_ms` is killed and reported with exit code 124.\n"
    "- If a command needs to run outside the sandbox (writing elsewhere, network), set `escalate`"
    " and give a `justification` phrased as a question; someone may approve or deny it."
)


class ShellArgs(BaseModel):
    """Arguments of the `shell` tool."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] | str = Field(
        description="The command: an argument list run directly, or a string run by `bash -c`."
    )
    workdir: str | None = Field(
        default=None, description="Working directory, relative to the current directory."
    )
    timeout_ms: int | None = Field(
        default=None,
        ge=1,
        description="Kill the command after this many ms (default 10000).",
    )
    escalate: bool = Field(
        default=False, description="Ask to run this command outside the sandbox."
    )
    justification: str | None = Field(
        default=None, description="Why the command must run outside the sandbox, as a question."
    )

    @field_validator("command")
    @classmethod
    def _not_empty(cls, command: list[str] | str) -> list[str] | str:
        empty = not command.strip() if isinstance(command, str) else not command or not command[0]
        if empty:
            raise ValueError("the command is empty: give a program and its arguments")
        return command

    def argv(self) -> list[str]:
        return ["bash", "-c", self.command] if isinstance(self.command, str) else self.command

    def display(self) -> str:
        return self.command if isinstance(self.command, str) else shlex.join(self.command)


@dataclass(frozen=True)
class ShellSettings:
    """Limits of one `shell` tool instance."""

    max_timeout_ms: int = MAX_TIMEOUT_MS
    default_timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    approval_timeout: float = APPROVAL_TIMEOUT
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables every command gets on top of the sandbox's allow-listed ones."""


def shell_tool(
    *,
    max_timeout_ms: int = MAX_TIMEOUT_MS,
    default_timeout_ms: int = DEFAULT_TIMEOUT_MS,
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
    approval_timeout: float = APPROVAL_TIMEOUT,
    env: Mapping[str, str] | None = None,
) -> Tool[ShellArgs]:
    """The `shell` tool, with its timeouts, output budget, approval deadline and variables."""
    settings = ShellSettings(
        max_timeout_ms=max_timeout_ms,
        default_timeout_ms=default_timeout_ms,
        max_output_tokens=max_output_tokens,
        approval_timeout=approval_timeout,
        env=dict(env or {}),
    )

    async def handle(args: ShellArgs, ctx: ToolContext) -> ToolOutput:
        return await _ShellRun(args, ctx, settings).execute()

    return Tool(
        name=SHELL_TOOL_NAME,
        description=_DESCRIPTION,
        args=ShellArgs,
        handler=handle,
        mutating=True,
        parallel=True,
    )


@functools.cache
def _default_sandbox() -> Sandbox:
    return BubblewrapSandbox()


class _ShellRun:
    """One call of the tool: the approval policy around one or two sandbox runs."""

    def __init__(self, args: ShellArgs, ctx: ToolContext, settings: ShellSettings) -> None:
        self.args = args
        self.settings = settings
        self.profile = ctx.profile
        self.cwd = _workdir(args, ctx)
        asked = settings.default_timeout_ms if args.timeout_ms is None else args.timeout_ms
        self.timeout = min(asked, settings.max_timeout_ms) / 1000
        services = ctx.services
        self.sandbox = services.sandbox or _default_sandbox()
        self.approver = services.approver or DenyAllApprover()
        self.on_wait = services.approval_observer
        self.agent_id = ctx.agent_id
        self.hooks = services.hooks
        self.hook_scope = hook_scope(ctx, self.sandbox)

    async def execute(self) -> ToolOutput:
        confined = self.profile.sandbox is not SandboxMode.FULL_ACCESS
        policy = self.profile.approval
        if self.args.escalate and confined:
            return await self._escalate(policy)
        if policy is ApprovalPolicy.UNTRUSTED and not is_known_safe_command(self.args.command):
            reason = "the command is not one of the known read-only commands"
            decision = await self._ask(ApprovalKind.UNTRUSTED_COMMAND, reason)
            if not decision.approved:
                return _denied(decision)
        result = await self._run(self.profile)
        retry = policy in (ApprovalPolicy.ON_FAILURE, ApprovalPolicy.UNTRUSTED)
        if confined and retry and looks_like_sandbox_denial(result):
            return await self._retry_unsandboxed(result)
        return self._answer(result)

    async def _escalate(self, policy: ApprovalPolicy) -> ToolOutput:
        if policy is ApprovalPolicy.NEVER:
            return ToolOutput.error(
                "escalation refused: the approval policy is never, so commands cannot run outside"
                " the sandbox; the command was not run. Find a way within the sandbox."
            )
        if not self.args.justification:
            raise InvalidInput("`escalate` needs a `justification` saying why; nothing was run")
        decision = await self._ask(ApprovalKind.ESCALATE, self.args.justification)
        if not decision.approved:
            return _denied(decision)
        return self._answer(await self._run(_unconfined(self.profile)))

    async def _retry_unsandboxed(self, first: CommandResult) -> ToolOutput:
        reason = f"the command failed in the sandbox (exit code {first.exit_code})"
        decision = await self._ask(ApprovalKind.RETRY_UNSANDBOXED, reason)
        if not decision.approved:
            note = f"\n(running it again outside the sandbox was denied: {decision.reason})"
            return ToolOutput.error(self._render(first) + note)
        return self._answer(await self._run(_unconfined(self.profile)))

    async def _ask(self, kind: ApprovalKind, reason: str) -> ApprovalDecision:
        req = ApprovalRequest(
            tool=SHELL_TOOL_NAME,
            command=self.args.display(),
            cwd=self.cwd,
            reason=reason,
            kind=kind,
            agent_id=self.agent_id,
        )
        if self.hooks is not None:
            decided = await permission_by_hooks(self.hooks, self.hook_scope, req)
            if decided is not None:
                return decided
        limit = self.settings.approval_timeout
        return await request_approval(self.approver, req, answer_within=limit, on_wait=self.on_wait)

    async def _run(self, profile: PermissionProfile) -> CommandResult:
        budget_tokens = max(self.settings.max_output_tokens - _HEADER_RESERVE_TOKENS, 0)
        return await self.sandbox.run(
            self.args.argv(),
            cwd=self.cwd,
            profile=profile,
            timeout=self.timeout,
            env=self.settings.env,
            output_budget=budget_tokens * APPROX_BYTES_PER_TOKEN,
        )

    def _answer(self, result: CommandResult) -> ToolOutput:
        text = self._render(result)
        return ToolOutput(
            text=text,
            success=result.exit_code == 0 and not result.timed_out,
            network_denials=result.network_denials,
        )

    def _render(self, result: CommandResult) -> str:
        return format_command_output(result, timeout=self.timeout)


def format_command_output(result: CommandResult, *, timeout: float) -> str:
    """Codex's freeform rendering of a finished command for the model."""
    body = result.output
    if result.timed_out:
        body = f"command timed out after {timeout:g} s\n{body}"
    lines = [f"Exit code: {result.exit_code}", f"Wall time: {result.duration:.1f} seconds"]
    if result.truncated_bytes:
        lines.append(f"Total output lines: {result.line_count}")
    if result.network_denials:
        refused = "; ".join(dict.fromkeys(result.network_denials))
        lines.append(
            f"Network policy refused {len(result.network_denials)} connection(s): {refused}"
        )
    lines += ["Output:", body]
    return "\n".join(lines)


def _workdir(args: ShellArgs, ctx: ToolContext) -> Path:
    return workdir_for(args.workdir, ctx)


def workdir_for(workdir: str | None, ctx: ToolContext) -> Path:
    """The command's working folder: `workdir` resolved and checked readable, else the cwd."""
    if workdir is None:
        return ctx.cwd
    resolved = ctx.profile.check_read(workdir, cwd=ctx.cwd)
    if not resolved.is_dir():
        raise InvalidInput(f"workdir {workdir} is not a directory under {ctx.cwd}")
    return resolved


def _unconfined(profile: PermissionProfile) -> PermissionProfile:
    """The profile of one approved run outside the sandbox; the agent's profile is unchanged."""
    return profile.model_copy(update={"sandbox": SandboxMode.FULL_ACCESS})


def _denied(decision: ApprovalDecision) -> ToolOutput:
    return ToolOutput.error(f"the command was not run: approval was denied ({decision.reason})")
