"""What the runtime journals about an agent's life: the note of its start, and a crash in a line."""

from __future__ import annotations

from typing import Any

from corral.agents import AgentSpec


def started_note(spec: AgentSpec) -> dict[str, Any]:
    return {
        "nickname": spec.nickname,
        "role": spec.role,
        "parent_id": spec.parent_id,
        "depth": spec.depth,
    }


def describe_crash(exc: BaseException) -> str:
    """The innermost error of `exc` (task groups wrap what failed inside them) in one line."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
