"""What a refactor worker is told: its task, its result format, and its agent spec.

The task names the instruction, the worker's files (the only ones it may change), the check, and
how to hand in its result through `report_result`. A later attempt also gets the output of the
check that failed. The spec is the run's prototype with the worker's own worktree and profile:
`workspace-write` whose writable roots are exactly its files, so it can edit and delete them but
create nothing; reads are limited to its worktree and the repository's git data.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from corral.agents import AgentSpec
from corral.tools import ApprovalPolicy, PermissionProfile, SandboxMode

from ..._run import Peer, render_subagent_context
from ...fanout import REPORT_RESULT
from ._check import CheckResult
from ._partition import WriteSet

RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {
            "type": "string",
            "description": "What you changed, file by file, and anything left undone.",
        },
        "check_passed": {
            "type": "boolean",
            "description": "Whether the last run of the check passed.",
        },
    },
    "required": ["summary", "check_passed"],
    "additionalProperties": False,
}

WORKER_INSTRUCTIONS = (
    "You are one worker of a batch refactoring. The last user message is your whole task. "
    f"When you are done, call `{REPORT_RESULT}` once; if it answers with errors, fix the result "
    "and call it again. Then end your turn with a one-line summary."
)


def render_task(
    instruction: str,
    write_set: WriteSet,
    check: str | None,
    *,
    attempt: int = 1,
    max_attempts: int = 1,
    failed: CheckResult | None = None,
) -> str:
    """The task of the worker of `write_set`; `failed` is the check that ended the last attempt."""
    files = "\n".join(f"- {path}" for path in write_set.files)
    parts = [
        f"Refactoring instruction:\n{instruction.strip()}",
        "Your files (paths from the top of your working directory, a git worktree of the "
        f"repository). Change only these; other workers own every other file:\n{files}",
        _check_text(check),
        "You can edit or delete your files with `apply_patch`, but not create or rename files. "
        "If the instruction needs a new file or a change to a file that is not yours, do not "
        "attempt it: say so in your summary.",
        f"When you are done, call `{REPORT_RESULT}` with `summary` (what you changed and what "
        "is left undone) and `check_passed` (whether your last run of the check passed). The "
        "check is run again after you finish, and only then are your changes merged.",
    ]
    if failed is not None:
        parts.append(
            f"This is attempt {attempt} of {max_attempts}. The changes of the previous attempt "
            "are still in your files, but the check failed after it "
            f"({failed.describe()}); its last lines:\n{failed.tail()}\nFix your files so the "
            "check passes."
        )
    return "\n\n".join(parts)


def _check_text(check: str | None) -> str:
    if check is None:
        return "No check command was given: read your changes over carefully instead."
    return (
        f"The check: run `{check}` with `shell` from your working directory (set `timeout_ms` "
        "if it may take more than 10 seconds) until it passes. It must pass when you finish."
    )


def worker_context(agent_id: str, nickname: str, write_set: WriteSet, task: str) -> str:
    """The `<subagent_context>` of a worker: who it is, its write set and its task."""
    me = Peer(agent_id, nickname, tuple(Path(path) for path in write_set.files))
    return render_subagent_context(me=me, parent=None, task=task, siblings=())


def worker_spec(
    prototype: AgentSpec,
    *,
    agent_id: str,
    nickname: str,
    worktree: Path,
    files: Sequence[str],
    git_dir: Path,
) -> AgentSpec:
    """The prototype working in `worktree`, allowed to write exactly `files` there."""
    profile = PermissionProfile(
        sandbox=SandboxMode.WORKSPACE_WRITE,
        writable_roots=tuple(worktree / path for path in files),
        readable_roots=(worktree, git_dir),
        network=prototype.profile.network,
        allowed_domains=prototype.profile.allowed_domains,
        denied_domains=prototype.profile.denied_domains,
        approval=ApprovalPolicy.NEVER,
        hidden_roots=prototype.profile.hidden_roots,
    )
    update = {"agent_id": agent_id, "nickname": nickname, "cwd": worktree, "profile": profile}
    return prototype.model_copy(update=update)
