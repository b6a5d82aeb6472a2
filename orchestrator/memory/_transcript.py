"""What a run did, read from an agent's history: the files it touched and a short transcript.

Both feed extraction: the transcript is what the model is asked to remember from, the files are
recorded with each memory. Injected context (AGENTS.md, the environment, earlier recalled
memories) is left out of the transcript, so a run never re-learns what it was reminded of.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from corral.agents import FunctionCall, FunctionCallOutput, Item, Message, is_contextual

_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
_MOVE_TO = re.compile(r"^\*\*\* Move to: (.+)$", re.MULTILINE)
_PATH_ARGS = ("path", "file_path", "filename")
PIECE = 600
"""Each tool call's arguments and output are cut to this many characters."""
TRANSCRIPT = 12_000
"""The transcript keeps its last this many characters (the end says what was learned)."""


def changed_files(history: Sequence[Item]) -> list[str]:
    """The paths `apply_patch` calls in `history` created, edited, moved or deleted."""
    found: list[str] = []
    for item in history:
        if isinstance(item, FunctionCall) and item.name == "apply_patch":
            patch = _argument(item.arguments, "input") or item.arguments
            found += [p.strip() for p in _PATCH_FILE.findall(patch) + _MOVE_TO.findall(patch)]
    return found


def involved_files(history: Sequence[Item]) -> list[str]:
    """Changed files, and the paths tool calls read or listed (`path` arguments)."""
    found = changed_files(history)
    for item in history:
        if isinstance(item, FunctionCall):
            found += [v for k in _PATH_ARGS if (v := _argument(item.arguments, k)) and v != "."]
    return found


def transcript(task: str, history: Sequence[Item], clean: Callable[[str], str]) -> str:
    """The task, then what the agent said and did, one block each, cut to `TRANSCRIPT`.
    Each text goes through `clean` (the redactor) before it is cut, so a cut never leaves
    half a secret that its pattern no longer knows."""
    blocks = [f"TASK: {_cut(clean(task))}"]
    for item in history:
        if isinstance(item, Message) and item.text and not is_contextual(item.text):
            blocks.append(f"{item.role.upper()}: {_cut(clean(item.text))}")
        elif isinstance(item, FunctionCall):
            blocks.append(f"TOOL CALL {item.name}: {_cut(clean(item.arguments))}")
        elif isinstance(item, FunctionCallOutput):
            blocks.append(f"TOOL OUTPUT: {_cut(clean(item.output))}")
    text = "\n\n".join(blocks)
    return text if len(text) <= TRANSCRIPT else "…" + text[-TRANSCRIPT:]


def _cut(text: str) -> str:
    return text if len(text) <= PIECE else text[: PIECE // 2] + " … " + text[-PIECE // 2 :]


def _argument(arguments: str, name: str) -> str | None:
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):  # the model's text, nested as deep as it liked
        return None
    found = value.get(name) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None
