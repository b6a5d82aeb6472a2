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
    Decision,
    HookCommand,
    HookEvent,
    HookRun,
    HooksConfig,
)
from .._permissions import PermissionProfile, SandboxMode, is_within
from .._sandbox import CommandResult, Sandbox
from .._sandbox._env import DEFAULT_PATH

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
# Strings are cut no shorter than this; a payload that still does not fit is not delivered.
_MIN_FIELD_CHARS = 128


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
        if text is None:
            return _undeliverable(event, commands)
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
    env = {
        **passed,
        "PATH": hook_path(os.environ.get("PATH", DEFAULT_PATH), scope.profile),
        # The hook runs in the agent's folder: `python3 -c` would import a `json.py` the
        # agent wrote there before the standard library's.
        "PYTHONSAFEPATH": "1",
        "CORRAL_HOOK_INPUT": text,
        "CORRAL_HOOK_COMMAND": hook.command,
    }
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


def hook_path(path: str, profile: PermissionProfile) -> str:
    """`path` without the entries the agent could have put a program in: relative ones (taken
    from the agent's folder) and those inside its writable roots. Otherwise a `python3` the
    model wrote to `./node_modules/.bin` would run as the user's hook, and answer for it (or,
    with `sandbox = "none"`, run outside the sandbox)."""
    writable = [Path(os.path.realpath(root)) for root in profile.writable_roots]
    kept = [
        entry
        for entry in path.split(os.pathsep)
        if os.path.isabs(entry) and not is_within(Path(os.path.realpath(entry)), writable)
    ]
    return os.pathsep.join(kept) or DEFAULT_PATH


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


def _payload_text(payload: Mapping[str, Any]) -> str | None:
    """The payload as JSON, its long strings and long lists cut (their heads kept) until it
    fits one environment variable; None if even the shortest cut does not fit."""
    limit = MAX_FIELD_CHARS
    while limit >= _MIN_FIELD_CHARS:
        text = json.dumps(_cut(payload, limit), ensure_ascii=False)
        if len(text.encode()) <= _MAX_PAYLOAD_BYTES:
            return text
        limit //= 4
    return None


def _cut(value: Any, limit: int) -> Any:
    # Lists and tables are cut too: a call padded with thousands of short arguments would
    # otherwise not fit, and a hook that cannot start is ignored.
    items = max(limit // 16, 8)
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"... [{len(value) - limit} characters cut]"
    if isinstance(value, Mapping):
        kept = {str(k): _cut(v, limit) for k, v in list(value.items())[:items]}
        if len(value) > items:
            kept["..."] = f"[{len(value) - items} more entries cut]"
        return kept
    if isinstance(value, list | tuple):
        cut = [_cut(v, limit) for v in value[:items]]
        return [*cut, f"... [{len(value) - items} more items cut]"] if len(value) > items else cut
    return value


def _undeliverable(event: HookEvent, commands: Sequence[HookCommand]) -> HookOutcome:
    """What hooks that cannot be given their payload decide: a blocking event is refused
    (its hooks were meant to check it and cannot), any other is a failed run."""
    blocking = event in BLOCKING_EVENTS
    reason = "the input is too large or too deeply nested for the hooks to be given it"
    decision: Decision = "block" if blocking else "failed"
    shown = f"{reason}; make it smaller" if blocking else reason
    # As with a hook that blocked, the hooks after the first are not run.
    skipped = commands[:1] if blocking else commands
    runs = tuple(
        HookRun(
            event=event,
            command=hook.command,
            exit_code=None,
            started_at=time.time(),
            duration=0.0,
            decision=decision,
            reason=shown,
        )
        for hook in skipped
    )
    logger.warning("%s hooks not run: %s", event.value, reason)
    return _combine(event, runs)
