"""`exec_command` and `write_stdin`: commands that keep running between tool calls (Codex's
unified exec).

`exec_command` starts a command on a pseudo-terminal in the same sandbox and under the same
approval rules as `shell`, waits up to a yield time and answers the output so far, with a session
id while it still runs; `write_stdin` sends characters to that session (or nothing, to poll) and
answers what came next. Output is bounded like `shell`'s. Who owns a session and when it is
stopped is `_exec_sessions`'s business; how the command is confined is the sandbox's.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._approval import ApprovalKind, ApprovalRequest, DenyAllApprover
from ._errors import OperationFailed
from ._exec_sessions import ExecSession, ExecSessions
from ._permissions import ApprovalPolicy, PermissionProfile
from ._registry import Tool, ToolContext, ToolOutput
from ._safe_commands import is_known_safe_command
from ._sandbox import BubblewrapSandbox, InteractiveProcess
from ._shell import DEFAULT_MAX_OUTPUT_TOKENS, workdir_for
from ._truncate import APPROX_BYTES_PER_TOKEN, HeadTailBuffer
from ._user_hooks import approve_with_hooks

EXEC_COMMAND = "exec_command"
WRITE_STDIN = "write_stdin"
# Codex's yield times (`core/src/unified_exec/mod.rs`).
DEFAULT_EXEC_YIELD_MS = 10_000
DEFAULT_WRITE_YIELD_MS = 250
MIN_YIELD_MS = 250
MAX_YIELD_MS = 30_000
MIN_EMPTY_POLL_YIELD_MS = 5_000
# How long input may wait for a command to read it (at least; a longer yield waits longer).
WRITE_TIMEOUT_MS = 2_000
_HEADER_RESERVE_TOKENS = 64

_EXEC_DESCRIPTION = (
    "Starts a command in a pseudo-terminal and returns its output so far. If it is still"
    " running after `yield_time_ms`, the answer carries a session ID: use `write_stdin` to send"
    " it input or to read more output. Use it for dev servers, REPLs, prompts and long builds;"
    " use `shell` for one-shot commands.\n- `cmd` runs under `bash -c` in your sandbox, with"
    " your permissions.\n- Set `workdir` (relative to the current directory) instead of `cd`."
)
_WRITE_DESCRIPTION = (
    "Writes characters to a running exec_command session and returns the output that follows."
    " `chars` may be empty to only read new output; send \\u0003 for Ctrl-C and \\u0004 for"
    " end of input."
)


class ExecCommandArgs(BaseModel):
    """Arguments of `exec_command`."""

    model_config = ConfigDict(extra="forbid")

    cmd: str = Field(description="The command, run by `bash -c`.")
    workdir: str | None = Field(
        default=None, description="Working directory, relative to the current directory."
    )
    yield_time_ms: int | None = Field(
        default=None, ge=0, description="How long to wait for output (default 10000, max 30000)."
    )
    max_output_tokens: int | None = Field(
        default=None, ge=1, description="Most output tokens to return (default 10000)."
    )

    @field_validator("cmd")
    @classmethod
    def _not_empty(cls, cmd: str) -> str:
        if not cmd.strip():
            raise ValueError("the command is empty: give a program and its arguments")
        return cmd


class WriteStdinArgs(BaseModel):
    """Arguments of `write_stdin`."""

    model_config = ConfigDict(extra="forbid")

    session_id: int = Field(description="The session ID exec_command answered.")
    chars: str = Field(default="", description="Characters to write; empty to only poll.")
    yield_time_ms: int | None = Field(
        default=None, ge=0, description="How long to wait for output (default 250, max 30000)."
    )
    max_output_tokens: int | None = Field(
        default=None, ge=1, description="Most output tokens to return (default 10000)."
    )


@runtime_checkable
class InteractiveSandbox(Protocol):
    """A sandbox that can also start long-lived commands (`BubblewrapSandbox` can)."""

    async def start_interactive(
        self, argv: list[str], *, cwd: Path, profile: PermissionProfile, env: dict[str, str]
    ) -> InteractiveProcess: ...


def exec_command_tool(
    *, max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS, approval_timeout: float
) -> Tool[ExecCommandArgs]:
    """The `exec_command` tool; `max_output_tokens` caps what one answer may carry."""

    async def handle(args: ExecCommandArgs, ctx: ToolContext) -> ToolOutput:
        sessions = _sessions_of(ctx)
        sessions.check_room(ctx.agent_id)
        cwd = workdir_for(args.workdir, ctx)
        await _approve(args.cmd, ctx, approval_timeout)
        sandbox = _interactive_sandbox(ctx)
        started = time.monotonic()
        process = await sandbox.start_interactive(
            ["bash", "-c", args.cmd], cwd=cwd, profile=ctx.profile, env={}
        )
        session = await sessions.add(ctx.agent_id, args.cmd, process)
        yield_ms = _yield_ms(args.yield_time_ms, DEFAULT_EXEC_YIELD_MS, polling=False)
        budget = _budget(args.max_output_tokens, max_output_tokens)
        return await _collect(sessions, session, yield_ms, budget, started)

    return Tool(EXEC_COMMAND, _EXEC_DESCRIPTION, ExecCommandArgs, handle, mutating=True)


def write_stdin_tool(*, max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS) -> Tool[WriteStdinArgs]:
    """The `write_stdin` tool: input to, and output from, the caller's own sessions."""

    async def handle(args: WriteStdinArgs, ctx: ToolContext) -> ToolOutput:
        sessions = _sessions_of(ctx)
        session = sessions.get(ctx.agent_id, args.session_id)
        started = time.monotonic()
        polling = not args.chars
        yield_ms = _yield_ms(args.yield_time_ms, DEFAULT_WRITE_YIELD_MS, polling=polling)
        data = args.chars.encode("utf-8")
        taken = await session.process.write(data, max(yield_ms, WRITE_TIMEOUT_MS) / 1000)
        budget = _budget(args.max_output_tokens, max_output_tokens)
        output = await _collect(sessions, session, yield_ms, budget, started)
        if taken < len(data):
            note = f"Only {taken} of {len(data)} bytes were written: the command is not reading."
            return ToolOutput(f"{note}\n{output.text}", success=False)
        return output

    return Tool(
        WRITE_STDIN, _WRITE_DESCRIPTION, WriteStdinArgs, handle, mutating=True, parallel=False
    )


async def _collect(
    sessions: ExecSessions, session: ExecSession, yield_ms: int, budget: int, started: float
) -> ToolOutput:
    """Read for up to `yield_ms`; release the session if its command ended meanwhile."""
    buffer = HeadTailBuffer(budget)
    process = session.process
    await process.read(buffer, yield_ms / 1000)
    lines = [f"Wall time: {time.monotonic() - started:.1f} seconds"]
    if process.finished:
        code = process.returncode if process.returncode is not None else -1
        await sessions.release(session)
        lines.append(f"Process exited with code {128 - code if code < 0 else code}")
    else:
        lines.append(f"Process running with session ID {session.session_id}")
    if buffer.dropped_bytes:
        lines.append(f"Total output lines: {buffer.total_lines}")
    lines += ["Output:", buffer.text()]
    return ToolOutput("\n".join(lines))


async def _approve(cmd: str, ctx: ToolContext, within: float) -> None:
    """`shell`'s rule under `untrusted`: anything but a known read-only command is asked."""
    if ctx.profile.approval is not ApprovalPolicy.UNTRUSTED or is_known_safe_command(cmd):
        return
    services = ctx.services
    request = ApprovalRequest(
        tool=EXEC_COMMAND,
        command=cmd,
        cwd=ctx.cwd,
        reason="the command is not one of the known read-only commands",
        kind=ApprovalKind.UNTRUSTED_COMMAND,
        agent_id=ctx.agent_id,
    )
    approver = services.approver or DenyAllApprover()
    decision = await approve_with_hooks(ctx, request, approver, within=within)
    if not decision.approved:
        raise OperationFailed(f"the command was not run: approval was denied ({decision.reason})")


def _sessions_of(ctx: ToolContext) -> ExecSessions:
    sessions = ctx.services.exec_sessions
    if sessions is None:
        raise OperationFailed(
            "interactive command sessions are not available in this run; use `shell` instead"
        )
    return sessions


def _interactive_sandbox(ctx: ToolContext) -> InteractiveSandbox:
    sandbox = ctx.services.sandbox or _default_sandbox()
    if not isinstance(sandbox, InteractiveSandbox):
        raise OperationFailed(
            "this run's sandbox cannot keep commands running; use `shell` instead"
        )
    return sandbox


@functools.cache
def _default_sandbox() -> BubblewrapSandbox:
    return BubblewrapSandbox()


def _yield_ms(asked: int | None, default: int, *, polling: bool) -> int:
    value = default if asked is None else asked
    floor = MIN_EMPTY_POLL_YIELD_MS if polling else MIN_YIELD_MS
    return min(max(value, floor), MAX_YIELD_MS)


def _budget(asked: int | None, cap: int) -> int:
    tokens = cap if asked is None else min(asked, cap)
    return max(tokens - _HEADER_RESERVE_TOKENS, 0) * APPROX_BYTES_PER_TOKEN
