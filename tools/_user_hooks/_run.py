"""Running the user's hook commands for one event, and reading what they answered.

A command gets the event's JSON on stdin (through the environment: the sandbox seam has no stdin)
and runs in the agent's sandbox unless its config says `sandbox = "none"`. It answers, as in
Codex and Claude Code, with exit code 2 (block; the output is the reason) or exit code 0 and an
optional JSON object as its whole output: `{"decision": "block", "reason": ...}`,
`hookSpecificOutput.permissionDecision` (`deny` or `allow`) with `permissionDecisionReason`,
`continue: false` with `stopReason`, and `additionalContext` (top level or in
`hookSpecificOutput`); other output only observed. Any other exit code, a timeout or a sandbox
that cannot start is a failed hook: reported and recorded, never blocking and never hanging the
agent.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from .._errors import CorralError
from .._hook_model import (
    BLOCKING_EVENTS,
    CONTEXT_EVENTS,
    HookCommand,
    HookEvent,
    HookRun,
    HooksConfig,
)
from .._permissions import PermissionProfile, SandboxMode
from .._sandbox import CommandResult, Sandbox

logger = logging.getLogger("corral.hooks")

MAX_FIELD_CHARS = 32 * 1024
"""Longer strings in a payload are cut: the payload travels in one environment variable."""
_OUTPUT_BUDGET = 64 * 1024
# The sandbox kills a hook at its timeout; this much more covers setting the sandbox up.
_SETUP_GRACE = 30.0
_WRAPPER = 'printf "%s" "$CORRAL_HOOK_INPUT" | bash -c "$CORRAL_HOOK_COMMAND"'
_REASON_CHARS = 2_000
# Linux caps one environment string at 128 KiB.
_MAX_PAYLOAD_BYTES = 100 * 1024


@dataclass(frozen=True)
class HookOutcome:
    """What an event's hooks decided together: a block (its reason), context, and every run."""

    blocked: str | None = None
    allowed: bool = False
    context: tuple[str, ...] = ()
    runs: tuple[HookRun, ...] = ()

    @property
    def failures(self) -> list[HookRun]:
        return [r for r in self.runs if r.decision in ("failed", "timeout")]


@dataclass(frozen=True)
class HookScope:
    """Where an event's hooks run: the agent's folder, profile and sandbox."""

    cwd: Path
    profile: PermissionProfile
    sandbox: Sandbox
    base: Mapping[str, Any] = field(default_factory=dict)
    """Payload fields every event of this agent carries (ids, cwd)."""


@dataclass(frozen=True)
class HookRunner:
    """Runs the configured hooks of an event, one command after another."""

    config: HooksConfig

    async def run(
        self,
        event: HookEvent,
        scope: HookScope,
        payload: Mapping[str, Any],
        *,
        subject: str | None = None,
    ) -> HookOutcome:
        """Run `event`'s commands that match `subject`; the first block stops the rest."""
        commands = self.config.commands(event, subject)
        if not commands:
            return HookOutcome()
        text = _payload_text({**scope.base, "hook_event_name": event.value, **payload})
        runs: list[HookRun] = []
        for command in commands:
            run = await _run_one(event, command, scope, text)
            runs.append(run)
            if run.decision == "block" and event in BLOCKING_EVENTS:
                break
        return _combine(event, runs)


async def _run_one(event: HookEvent, hook: HookCommand, scope: HookScope, text: str) -> HookRun:
    profile = scope.profile
    if hook.sandbox == "none":
        profile = profile.model_copy(update={"sandbox": SandboxMode.FULL_ACCESS})
    passed = {name: os.environ[name] for name in hook.env_vars if name in os.environ}
    env = {**passed, "CORRAL_HOOK_INPUT": text, "CORRAL_HOOK_COMMAND": hook.command}
    started, began = time.time(), time.monotonic()
    try:
        with anyio.fail_after(hook.timeout + _SETUP_GRACE):
            result = await scope.sandbox.run(
                ["bash", "-c", _WRAPPER],
                cwd=scope.cwd,
                profile=profile,
                timeout=hook.timeout,
                env=env,
                output_budget=_OUTPUT_BUDGET,
            )
    except (CorralError, TimeoutError, OSError) as exc:
        result = None
        failure = f"the hook could not run: {exc or type(exc).__name__}"
    duration = time.monotonic() - began
    record = {"event": event, "command": hook.command, "started_at": started, "duration": duration}
    if result is None:
        run = HookRun(**record, exit_code=None, decision="failed", reason=failure)
    else:
        run = HookRun(**record, exit_code=result.exit_code, **_verdict(result, hook))
    if run.decision in ("failed", "timeout"):
        logger.warning("%s hook %r %s: %s", event.value, hook.command, run.decision, run.reason)
    return run


def _verdict(result: CommandResult, hook: HookCommand) -> dict[str, Any]:
    output = result.output.strip()
    if result.timed_out:
        return {"decision": "timeout", "reason": f"no answer within {hook.timeout:g} s"}
    if result.exit_code == 2:
        return {"decision": "block", "reason": output[:_REASON_CHARS] or "blocked by a hook"}
    if result.exit_code != 0:
        detail = f": {output[:_REASON_CHARS]}" if output else ""
        return {"decision": "failed", "reason": f"exit code {result.exit_code}{detail}"}
    answer = _json_answer(output)
    if answer is None:
        return {"decision": "observe"}
    return _read_answer(answer)


def _json_answer(output: str) -> dict[str, Any] | None:
    """The JSON object the hook printed, which must be its whole output.

    Never a line picked out of longer output: a hook that logs what it was given (a command,
    a tool's output, a commit message) would otherwise let whoever wrote that text forge the
    hook's decision, an approval included.
    """
    try:
        value = json.loads(output)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _read_answer(answer: dict[str, Any]) -> dict[str, Any]:
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    permission = specific.get("permissionDecision")
    if answer.get("decision") == "block" or permission == "deny" or answer.get("continue") is False:
        reason = (
            answer.get("reason")
            or specific.get("permissionDecisionReason")
            or answer.get("stopReason")
            or "blocked by a hook"
        )
        return {"decision": "block", "reason": str(reason)[:_REASON_CHARS]}
    context = specific.get("additionalContext") or answer.get("additionalContext")
    if isinstance(context, str) and context.strip():
        return {"decision": "context", "reason": context[:_REASON_CHARS]}
    if permission == "allow" or answer.get("decision") in ("allow", "approve"):
        return {"decision": "allow"}
    return {"decision": "observe"}


def _combine(event: HookEvent, runs: Sequence[HookRun]) -> HookOutcome:
    blocked = next((r.reason for r in runs if r.decision == "block"), None)
    context = (
        tuple(r.reason for r in runs if r.decision == "context")
        if (event in CONTEXT_EVENTS)
        else ()
    )
    allowed = any(r.decision == "allow" for r in runs)
    return HookOutcome(blocked=blocked, allowed=allowed, context=context, runs=tuple(runs))


def _payload_text(payload: Mapping[str, Any]) -> str:
    """The payload as JSON, its long strings cut until it fits one environment variable."""
    limit = MAX_FIELD_CHARS
    while True:
        text = json.dumps(_cut(payload, limit), ensure_ascii=False)
        if len(text.encode()) <= _MAX_PAYLOAD_BYTES or limit < 256:
            return text
        limit //= 4


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"... [{len(value) - limit} characters cut]"
    if isinstance(value, Mapping):
        return {str(k): _cut(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cut(v, limit) for v in value]
    return value
