"""What users configure as hooks, and what one hook run leaves behind.

The shape is Codex's and Claude Code's: per event, a list of matcher groups, each with a list of
commands (`[[hooks.PreToolUse]]` with `matcher` and `[[hooks.PreToolUse.hooks]]`). A matcher is
a regular expression matched whole against the tool name (`PreToolUse`, `PostToolUse`,
`PermissionRequest`) or the event's source (`SessionStart`: `startup` or `resume`); empty or `*`
matches everything. `sandbox = "agent"` (the default) runs the command in the agent's own
sandbox; `"none"` runs it on the host, unconfined.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_HOOK_TIMEOUT = 60.0
MAX_HOOK_TIMEOUT = 600.0


class HookEvent(StrEnum):
    PRE_TOOL_USE = "PreToolUse"
    PERMISSION_REQUEST = "PermissionRequest"
    POST_TOOL_USE = "PostToolUse"
    PRE_COMPACT = "PreCompact"
    POST_COMPACT = "PostCompact"
    SESSION_START = "SessionStart"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    SUBAGENT_START = "SubagentStart"
    SUBAGENT_STOP = "SubagentStop"
    STOP = "Stop"


BLOCKING_EVENTS = frozenset(
    {HookEvent.PRE_TOOL_USE, HookEvent.PERMISSION_REQUEST, HookEvent.USER_PROMPT_SUBMIT}
)
"""Events whose hooks may stop the action; on the others a `block` is reported, not obeyed
(PostToolUse's reason is shown to the model, as in Codex)."""
CONTEXT_EVENTS = frozenset(
    {HookEvent.SESSION_START, HookEvent.USER_PROMPT_SUBMIT, HookEvent.POST_TOOL_USE}
)
"""Events whose hooks may add context the model sees."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HookCommand(_Strict):
    """One command: run with the event's JSON on stdin, killed after `timeout` seconds."""

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: float = Field(default=DEFAULT_HOOK_TIMEOUT, gt=0, le=MAX_HOOK_TIMEOUT)
    sandbox: Literal["agent", "none"] = "agent"
    env_vars: tuple[str, ...] = ()
    """Variables of corral's own environment the command is given (a webhook URL, a token);
    otherwise it gets the sandbox's short allow-list only."""


class HookMatcher(_Strict):
    """Commands for the calls (or sources) `matcher` matches."""

    matcher: str = ""
    hooks: tuple[HookCommand, ...] = ()

    @field_validator("matcher")
    @classmethod
    def _valid_pattern(cls, matcher: str) -> str:
        try:
            re.compile(matcher)
        except re.error as exc:
            if matcher != "*":
                raise ValueError(f"matcher {matcher!r} is not a regular expression: {exc}") from exc
        return matcher

    def matches(self, subject: str | None) -> bool:
        if self.matcher in ("", "*") or subject is None:
            return True
        return re.fullmatch(self.matcher, subject) is not None


class HooksConfig(_Strict):
    """`[hooks]`: the commands to run on each lifecycle event, as Codex names them."""

    PreToolUse: tuple[HookMatcher, ...] = ()
    PermissionRequest: tuple[HookMatcher, ...] = ()
    PostToolUse: tuple[HookMatcher, ...] = ()
    PreCompact: tuple[HookMatcher, ...] = ()
    PostCompact: tuple[HookMatcher, ...] = ()
    SessionStart: tuple[HookMatcher, ...] = ()
    UserPromptSubmit: tuple[HookMatcher, ...] = ()
    SubagentStart: tuple[HookMatcher, ...] = ()
    SubagentStop: tuple[HookMatcher, ...] = ()
    Stop: tuple[HookMatcher, ...] = ()

    def commands(self, event: HookEvent, subject: str | None) -> list[HookCommand]:
        groups: tuple[HookMatcher, ...] = getattr(self, event.value)
        return [hook for group in groups if group.matches(subject) for hook in group.hooks]

    @property
    def empty(self) -> bool:
        return not any(getattr(self, event.value) for event in HookEvent)


Decision = Literal["block", "allow", "context", "observe", "failed", "timeout"]


class HookRun(_Strict):
    """One command's run, as journaled and traced: what ran, how it ended, what it decided."""

    event: HookEvent
    command: str
    exit_code: int | None
    started_at: float
    """Wall-clock seconds since the epoch."""
    duration: float
    decision: Decision
    reason: str = ""
    """The block's reason, the context added, or what went wrong."""
