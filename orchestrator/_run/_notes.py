"""What the runtime journals about an agent's life: the note of its start, and a crash in a line;
and what a restored agent reads back of its start."""

from __future__ import annotations

from typing import Any

from corral.agents import AgentSpec, Store, prompt_version


def started_note(spec: AgentSpec) -> dict[str, Any]:
    return {
        "prompt_version": prompt_version(spec.instructions),
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


async def journaled_context(store: Store, agent_id: str) -> dict[str, str]:
    """The fragments fixed at the agent's start (who it is, its skills), from its journal."""
    for record in await store.events(agent_id):
        if record.kind == "user_input":
            context = record.payload.get("context") or {}
            keys = ("subagent_context", "skills")
            return {k: v for k in keys if isinstance(v := context.get(k), str)}
    return {}
