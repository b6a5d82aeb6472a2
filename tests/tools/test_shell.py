"""The `shell` tool through the registry: output format, limits, and each approval policy."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.tools import (
    ApprovalPolicy,
    PermissionProfile,
    SandboxMode,
    ToolCall,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    ToolServices,
)
from corral.tools._approval import (
    ApprovalDecision,
    ApprovalKind,
    ApprovalRequest,
    CallbackApprover,
    DenyAllApprover,
    request_approval,
)
from corral.tools._safe_commands import is_known_safe_command, looks_like_sandbox_denial
from corral.tools._sandbox import BubblewrapSandbox, CommandResult, RecordingSandbox
from corral.tools._shell import ShellArgs, shell_tool
from corral.tools._truncate import truncate_middle

from .sandbox_support import Layout, make_layout

pytestmark = pytest.mark.anyio

HEADER = r"Exit code: (-?\d+)\nWall time: \d+\.\d seconds\n"


@pytest.fixture
def layout() -> Iterator[Layout]:
    yield from make_layout()


class Answers:
    """An approver's script: records each request and answers with one fixed decision."""

    def __init__(self, approved: bool, reason: str = "ok by the test") -> None:
        self.decision = ApprovalDecision(approved=approved, reason=reason)
        self.requests: list[ApprovalRequest] = []

    def __call__(self, req: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(req)
        return self.decision


def context(
    layout: Layout,
    approval: ApprovalPolicy = ApprovalPolicy.NEVER,
    *,
    mode: SandboxMode = SandboxMode.WORKSPACE_WRITE,
    **services: Any,
) -> ToolContext:
    profile = PermissionProfile.for_workspace(mode, layout.workspace, approval=approval)
    return ToolContext(cwd=layout.workspace, profile=profile, services=ToolServices(**services))


async def call_shell(ctx: ToolContext, **args: Any) -> ToolOutput:
    return await call_tool(shell_tool(), ctx, **args)


async def call_tool(tool: Any, ctx: ToolContext, **args: Any) -> ToolOutput:
    registry = ToolRegistry([tool])
    return await registry.dispatch(ToolCall("call-1", "shell", json.dumps(args)), ctx)


# -- running and formatting ------------------------------------------------------------------


async def test_argv_command_output_is_shown_in_codex_freeform_style(layout: Layout) -> None:
    out = await call_shell(context(layout), command=["echo", "hello"])
    assert re.fullmatch(HEADER + "Output:\nhello\n", out.text)
    assert out.success


async def test_string_command_runs_through_bash(layout: Layout) -> None:
    out = await call_shell(context(layout), command="echo a; echo b | tr b c; echo err >&2")
    assert out.text.endswith("Output:\na\nc\nerr\n")


async def test_failing_command_reports_its_exit_code_and_fails(layout: Layout) -> None:
    out = await call_shell(context(layout), command="echo nope; exit 3")
    assert re.fullmatch(HEADER + "Output:\nnope\n", out.text)
    assert out.text.startswith("Exit code: 3\n")
    assert not out.success


async def test_workdir_is_relative_to_the_current_directory(layout: Layout) -> None:
    out = await call_shell(context(layout), command=["pwd"], workdir="src")
    assert out.text.endswith(f"Output:\n{layout.workspace / 'src'}\n")


async def test_workdir_outside_the_readable_roots_is_refused(layout: Layout) -> None:
    ctx = context(layout)
    ctx.profile = ctx.profile.model_copy(update={"readable_roots": (layout.workspace,)})
    out = await call_shell(ctx, command=["pwd"], workdir="../outside")
    assert not out.success
    assert out.text.startswith("reading ../outside is not allowed")


async def test_missing_workdir_is_refused(layout: Layout) -> None:
    out = await call_shell(context(layout), command=["pwd"], workdir="nowhere")
    assert (out.success, out.text) == (
        False,
        f"workdir nowhere is not a directory under {layout.workspace}",
    )


async def test_empty_command_is_refused_with_a_reason(layout: Layout) -> None:
    out = await call_shell(context(layout), command=[])
    assert not out.success
    assert "the command is empty" in out.text


async def test_command_past_its_timeout_is_reported_with_exit_code_124(layout: Layout) -> None:
    out = await call_shell(context(layout), command=["sleep", "30"], timeout_ms=200)
    assert re.fullmatch(HEADER + "Output:\ncommand timed out after 0.2 s\n", out.text)
    assert out.text.startswith("Exit code: 124\n")
    assert not out.success


async def test_timeout_is_capped_at_the_configured_maximum(layout: Layout) -> None:
    sandbox = RecordingSandbox()
    ctx = context(layout, sandbox=sandbox)
    await call_tool(shell_tool(), ctx, command=["true"], timeout_ms=10**9)
    await call_tool(shell_tool(max_timeout_ms=5_000), ctx, command=["true"], timeout_ms=10**9)
    await call_tool(shell_tool(), ctx, command=["true"])
    assert [c.timeout for c in sandbox.calls] == [600.0, 5.0, 10.0]
    assert sandbox.calls[0].argv == ("true",)
    assert sandbox.calls[0].profile == ctx.profile


async def test_flooding_output_fits_the_tool_budget_with_line_count_and_marker(
    layout: Layout,
) -> None:
    tool = shell_tool(max_output_tokens=200)
    out = await call_tool(tool, context(layout), command="seq 1 200000")
    assert re.match(HEADER + r"Total output lines: 200000\nOutput:\n1\n2\n3\n", out.text)
    assert "tokens truncated…" in out.text
    assert out.text.endswith("199999\n200000\n")
    assert truncate_middle(out.text, 200) == out.text  # the agent's own cut leaves it alone


async def test_missing_bubblewrap_refuses_with_an_install_hint(layout: Layout) -> None:
    ctx = context(layout, sandbox=BubblewrapSandbox(layout.base / "no-bwrap"))
    out = await call_shell(ctx, command=["touch", "ran"])
    assert not out.success
    assert "apt-get install bubblewrap" in out.text
    assert not (layout.workspace / "ran").exists()


def test_shell_arguments_schema_is_strict_with_argv_or_string_command() -> None:
    schema = shell_tool().parameters_schema()
    assert schema["required"] == ["command", "workdir", "timeout_ms", "escalate", "justification"]
    assert schema["additionalProperties"] is False
    kinds = [option["type"] for option in schema["properties"]["command"]["anyOf"]]
    assert kinds == ["array", "string"]
    assert ShellArgs(command="ls -l").argv() == ["bash", "-c", "ls -l"]


# -- approvals -------------------------------------------------------------------------------

WRITE_OUTSIDE = "echo escaped > ../outside/escaped.txt"


async def test_never_refuses_escalation_without_asking(layout: Layout) -> None:
    answers = Answers(approved=True)
    ctx = context(layout, ApprovalPolicy.NEVER, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=WRITE_OUTSIDE, escalate=True, justification="may I?")
    assert not out.success
    assert "the approval policy is never" in out.text
    assert answers.requests == []
    assert not (layout.outside / "escaped.txt").exists()


async def test_never_reports_a_sandbox_denial_without_asking(layout: Layout) -> None:
    answers = Answers(approved=True)
    ctx = context(layout, ApprovalPolicy.NEVER, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=WRITE_OUTSIDE)
    assert "Read-only file system" in out.text
    assert answers.requests == []


async def test_on_request_escalation_runs_outside_the_sandbox_once_approved(
    layout: Layout,
) -> None:
    answers = Answers(approved=True)
    ctx = context(layout, ApprovalPolicy.ON_REQUEST, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=WRITE_OUTSIDE, escalate=True, justification="may I?")
    assert out.success
    assert (layout.outside / "escaped.txt").read_text() == "escaped\n"
    assert answers.requests == [
        ApprovalRequest("shell", WRITE_OUTSIDE, layout.workspace, "may I?", ApprovalKind.ESCALATE)
    ]
    assert ctx.profile.sandbox is SandboxMode.WORKSPACE_WRITE


async def test_on_request_denied_escalation_is_not_run_and_says_why(layout: Layout) -> None:
    answers = Answers(approved=False, reason="not today")
    ctx = context(layout, ApprovalPolicy.ON_REQUEST, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=WRITE_OUTSIDE, escalate=True, justification="may I?")
    assert (out.success, out.text) == (
        False,
        "the command was not run: approval was denied (not today)",
    )
    assert not (layout.outside / "escaped.txt").exists()


async def test_on_request_escalation_needs_a_justification(layout: Layout) -> None:
    answers = Answers(approved=True)
    ctx = context(layout, ApprovalPolicy.ON_REQUEST, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=WRITE_OUTSIDE, escalate=True)
    assert not out.success
    assert "needs a `justification`" in out.text
    assert answers.requests == []


async def test_on_request_does_not_ask_without_an_escalation(layout: Layout) -> None:
    answers = Answers(approved=True)
    ctx = context(layout, ApprovalPolicy.ON_REQUEST, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=WRITE_OUTSIDE)
    assert "Read-only file system" in out.text
    assert answers.requests == []


async def test_without_an_approver_escalation_is_denied_as_in_a_batch_run(layout: Layout) -> None:
    ctx = context(layout, ApprovalPolicy.ON_REQUEST)
    out = await call_shell(ctx, command=WRITE_OUTSIDE, escalate=True, justification="may I?")
    assert out.text == "the command was not run: approval was denied (approval policy is never)"


async def test_on_failure_offers_an_unsandboxed_retry_after_a_sandbox_denial(
    layout: Layout,
) -> None:
    answers = Answers(approved=True)
    ctx = context(layout, ApprovalPolicy.ON_FAILURE, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=WRITE_OUTSIDE)
    assert out.success
    assert (layout.outside / "escaped.txt").read_text() == "escaped\n"
    [req] = answers.requests
    assert req.kind is ApprovalKind.RETRY_UNSANDBOXED
    assert req.reason == "the command failed in the sandbox (exit code 1)"


async def test_on_failure_denied_retry_returns_the_sandboxed_failure(layout: Layout) -> None:
    answers = Answers(approved=False, reason="stay inside")
    ctx = context(layout, ApprovalPolicy.ON_FAILURE, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=WRITE_OUTSIDE)
    assert not out.success
    assert "Read-only file system" in out.text
    assert out.text.endswith("(running it again outside the sandbox was denied: stay inside)")
    assert not (layout.outside / "escaped.txt").exists()


@pytest.mark.parametrize("command", ["exit 1", "no-such-program-corral", "ls /nonexistent"])
async def test_on_failure_does_not_ask_about_ordinary_failures(
    layout: Layout, command: str
) -> None:
    answers = Answers(approved=True)
    ctx = context(layout, ApprovalPolicy.ON_FAILURE, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=command)
    assert not out.success
    assert answers.requests == []


async def test_untrusted_runs_known_read_only_commands_without_asking(layout: Layout) -> None:
    answers = Answers(approved=False)
    ctx = context(layout, ApprovalPolicy.UNTRUSTED, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command="ls src && cat src/main.py | wc -l")
    assert out.text.endswith("Output:\nmain.py\n1\n")
    assert answers.requests == []


async def test_untrusted_asks_before_other_commands_and_runs_them_sandboxed(
    layout: Layout,
) -> None:
    answers = Answers(approved=True)
    ctx = context(layout, ApprovalPolicy.UNTRUSTED, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=["touch", "made"])
    assert out.success and (layout.workspace / "made").exists()
    [req] = answers.requests
    assert (req.kind, req.command) == (ApprovalKind.UNTRUSTED_COMMAND, "touch made")


async def test_untrusted_denied_command_is_not_run(layout: Layout) -> None:
    answers = Answers(approved=False, reason="no")
    ctx = context(layout, ApprovalPolicy.UNTRUSTED, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=["touch", "made"])
    assert out.text == "the command was not run: approval was denied (no)"
    assert not (layout.workspace / "made").exists()


async def test_untrusted_approved_command_denied_by_the_sandbox_asks_again(
    layout: Layout,
) -> None:
    answers = Answers(approved=True)
    ctx = context(layout, ApprovalPolicy.UNTRUSTED, approver=CallbackApprover(answers))
    out = await call_shell(ctx, command=WRITE_OUTSIDE)
    assert out.success
    assert [r.kind for r in answers.requests] == [
        ApprovalKind.UNTRUSTED_COMMAND,
        ApprovalKind.RETRY_UNSANDBOXED,
    ]


async def test_an_approver_that_never_answers_is_a_denial_at_the_deadline(layout: Layout) -> None:
    async def silent(req: ApprovalRequest) -> ApprovalDecision:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    ctx = context(layout, ApprovalPolicy.ON_REQUEST, approver=CallbackApprover(silent))
    tool = shell_tool(approval_timeout=0.1)
    out = await call_tool(tool, ctx, command=WRITE_OUTSIDE, escalate=True, justification="?")
    assert out.text == "the command was not run: approval was denied (no answer within 0.1 s)"


async def test_an_approver_that_fails_is_a_denial() -> None:
    def broken(req: ApprovalRequest) -> ApprovalDecision:
        raise RuntimeError("approver crashed")

    req = ApprovalRequest("shell", "ls", Path("/"), "why", ApprovalKind.ESCALATE)
    decision = await request_approval(CallbackApprover(broken), req)
    assert decision == ApprovalDecision(
        False, "the approver failed: RuntimeError: approver crashed"
    )
    assert await DenyAllApprover().request(req) == ApprovalDecision(
        False, "approval policy is never"
    )


# -- classification --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["ls", "-la"],
        ["cat", "README.md"],
        ["git", "status"],
        ["git", "log", "--oneline", "-5"],
        ["rg", "-n", "TODO"],
        ["find", ".", "-name", "*.py"],
        ["bash", "-lc", "grep -rn foo . | head -5"],
        "pwd && ls",
        "echo 'a > b'; wc -l file",
        "git diff HEAD~1 || git show HEAD",
    ],
)
def test_read_only_commands_are_known_safe(command: list[str] | str) -> None:
    assert is_known_safe_command(command)


@pytest.mark.parametrize(
    "command",
    [
        ["rm", "-rf", "x"],
        ["find", ".", "-delete"],
        ["find", ".", "-exec", "rm", "{}", ";"],
        ["rg", "--pre", "sh", "x"],
        ["rg", "-iz", "x"],
        ["git", "push"],
        ["git", "-c", "core.pager=sh", "log"],
        ["git", "diff", "--output=/tmp/x"],
        ["/tmp/ls"],
        "ls > out.txt",
        "cat a >> b",
        "ls; rm -rf /",
        "echo $(rm -rf x)",
        "echo `touch x`",
        "ls &",
        "(ls)",
        "ls\nrm x",
        "FOO=1 ls",
        "echo 'unbalanced",
    ],
)
def test_other_commands_are_not_known_safe(command: list[str] | str) -> None:
    assert not is_known_safe_command(command)


@pytest.mark.parametrize(
    ("result", "denial"),
    [
        (CommandResult(1, "touch: cannot touch 'x': Read-only file system\n"), True),
        (CommandResult(1, "bash: x: Permission denied\n"), True),
        (CommandResult(1, "Operation not permitted"), True),
        (CommandResult(126, "bash: ./x: Permission denied\n"), False),
        (CommandResult(127, "x: command not found\n"), False),
        (CommandResult(2, "permission denied"), False),
        (CommandResult(0, "permission denied"), False),
        (CommandResult(1, "tests failed\n"), False),
        (CommandResult(124, "permission denied", timed_out=True), False),
    ],
)
def test_sandbox_denials_are_recognised_by_codex_keywords(
    result: CommandResult, denial: bool
) -> None:
    assert looks_like_sandbox_denial(result) is denial
