"""The marked fragments that wrap injected context: their kinds, markers and detection.

Every piece of context corral injects (permissions, AGENTS.md, environment, subagent traffic,
skills, interruptions, compaction summaries) is rendered between a start and an end marker, so
compaction, replay and the UI can tell it from what a person or the model said. The bodies of
the bigger fragments are rendered by their own modules; the short fixed texts live here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ._prompt_files import read_prompt

# Markers compare ASCII case-insensitively, as Codex does; `str.lower` would also fold non-ASCII.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _ascii_lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


def _closing_tag(end: str) -> re.Pattern[str]:
    return re.compile(re.escape(end), re.IGNORECASE | re.ASCII)


@dataclass(frozen=True)
class FragmentKind:
    """One kind of marked fragment: the role it is sent as and its start and end markers."""

    name: str
    role: Literal["user", "developer"]
    start: str
    end: str

    def render(self, body: str) -> str:
        """`start + body + end`; the body carries its own newlines.

        A body holding this kind's own closing tag (in any ASCII case) gets it as `<\\/tag>`:
        text from a file, a hook or a tool must not end its fragment early and pass what follows
        off as something corral did not mark.
        """
        if self.end.startswith("</"):
            body = _closing_tag(self.end).sub(lambda m: "<\\/" + m.group(0)[2:], body)
        return f"{self.start}{body}{self.end}"

    def matches(self, text: str) -> bool:
        """Whether `text`, trimmed, opens with this kind's start marker and closes with its end."""
        if not self.start or not self.end:
            return False
        trimmed = text.strip()
        # Fold only the ends: a long message must not be copied once per fragment kind.
        head = _ascii_lower(trimmed[: len(self.start)])
        tail = _ascii_lower(trimmed[-len(self.end) :])
        return head == _ascii_lower(self.start) and tail == _ascii_lower(self.end)


def _tagged(name: str, role: Literal["user", "developer"], tag: str) -> FragmentKind:
    return FragmentKind(name=name, role=role, start=f"<{tag}>", end=f"</{tag}>")


PERMISSIONS = _tagged("permissions", "developer", "permissions instructions")
DEVELOPER_INSTRUCTIONS = _tagged("developer_instructions", "developer", "developer_instructions")
USER_INSTRUCTIONS = FragmentKind(
    name="user_instructions",
    role="user",
    start="# AGENTS.md instructions for ",
    end="</INSTRUCTIONS>",
)
ENVIRONMENT_CONTEXT = _tagged("environment_context", "user", "environment_context")
SUBAGENT_CONTEXT = _tagged("subagent_context", "user", "subagent_context")
SUBAGENT_NOTIFICATION = _tagged("subagent_notification", "user", "subagent_notification")
SKILL = _tagged("skill", "user", "skill")
SKILLS_INSTRUCTIONS = _tagged("skills_instructions", "developer", "skills_instructions")
TURN_ABORTED = _tagged("turn_aborted", "user", "turn_aborted")
TOOL_CALL_INTERRUPTED = _tagged("tool_call_interrupted", "user", "tool_call_interrupted")
COMPACTION_SUMMARY = _tagged("compaction_summary", "user", "compaction_summary")
HOOK_CONTEXT = _tagged("hook_context", "user", "hook_context")
"""Context a user's hook added (SessionStart, UserPromptSubmit), for the turn it came with."""
MODEL_SWITCH = _tagged("model_switch", "developer", "model_switch")
IMAGE_DROPPED = _tagged("image_dropped", "user", "image_dropped")
MEMORY_CONTEXT = _tagged("memory_context", "user", "memory_context")
"""What the run recalled from earlier runs (`orchestrator.memory`): data, never instructions."""

ALL_KINDS: tuple[FragmentKind, ...] = (
    PERMISSIONS,
    DEVELOPER_INSTRUCTIONS,
    USER_INSTRUCTIONS,
    ENVIRONMENT_CONTEXT,
    SUBAGENT_CONTEXT,
    SUBAGENT_NOTIFICATION,
    SKILL,
    SKILLS_INSTRUCTIONS,
    TURN_ABORTED,
    TOOL_CALL_INTERRUPTED,
    COMPACTION_SUMMARY,
    HOOK_CONTEXT,
    MODEL_SWITCH,
    IMAGE_DROPPED,
    MEMORY_CONTEXT,
)

SUMMARIZATION_PROMPT: str = read_prompt("fragments", "summarization_prompt.md")


def fragment_kind_of(text: str) -> FragmentKind | None:
    """The registered kind whose markers enclose `text`, or None for ordinary text."""
    return next((kind for kind in ALL_KINDS if kind.matches(text)), None)


def is_contextual(text: str) -> bool:
    """Whether `text` is injected context rather than something a person or the model said."""
    return fragment_kind_of(text) is not None


def turn_aborted_fragment() -> str:
    """Told to the model after the user interrupted a turn."""
    return TURN_ABORTED.render(f"\n{read_prompt('fragments', 'turn_aborted.md')}\n")


def tool_call_interrupted_fragment(call_id: str, tool: str) -> str:
    """Told to the model on resume for a call that started but never recorded a result."""
    text = read_prompt("fragments", "tool_call_interrupted.md")
    text = text.replace("{{call_id}}", call_id).replace("{{tool}}", tool)
    return TOOL_CALL_INTERRUPTED.render(f"\n{text}\n")


def compaction_summary_fragment(summary: str) -> str:
    """The user message that replaces compacted history: a short preface, then the summary."""
    prefix = read_prompt("fragments", "compaction_summary_prefix.md")
    body = summary.strip() or "(no summary available)"
    return COMPACTION_SUMMARY.render(f"\n{prefix}\n\n{body}\n")


def model_switch_fragment(previous: str, model: str, instructions: str) -> str:
    """Told to the model when its agent carries on with another model: what changed, then the
    new model's full base instructions (the request's own `instructions` stay as they were, so
    the cached prefix does)."""
    text = read_prompt("fragments", "model_switch.md")
    text = text.replace("{{previous}}", previous).replace("{{model}}", model)
    return MODEL_SWITCH.render(f"\n{text.strip()}\n\n{instructions.strip()}\n")
