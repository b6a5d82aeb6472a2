"""Which context fragments a turn carries: all of them first, afterwards only what changed.

The tracker keeps the last context sent (the baseline, as Codex's `TurnContextItem`). Unlike
Codex, a changed AGENTS.md (the cwd moved, or the file was edited) is sent again too.
"""

from __future__ import annotations

from ._events import TurnContext
from ._items import Message


class ContextTracker:
    """Turns successive `TurnContext`s into the messages to append to history."""

    def __init__(self) -> None:
        self.baseline: TurnContext | None = None

    def items_for(self, context: TurnContext) -> list[Message]:
        previous, self.baseline = self.baseline, context
        if previous is None:
            return self.initial_items()
        return _diff_items(previous, context)

    def initial_items(self) -> list[Message]:
        """The full context of the current baseline (also re-injected after compaction)."""
        ctx = self.baseline
        if ctx is None:
            return []
        items = [Message(role="developer", text=ctx.permissions)]
        if ctx.developer_instructions:
            items.append(Message(role="developer", text=ctx.developer_instructions))
        if ctx.skills:
            items.append(Message(role="developer", text=ctx.skills))
        if ctx.agents_md:
            items.append(Message(role="user", text=ctx.agents_md))
        items.append(Message(role="user", text=ctx.environment.render()))
        if ctx.subagent_context:
            items.append(Message(role="user", text=ctx.subagent_context))
        if ctx.memory:
            items.append(Message(role="user", text=ctx.memory))
        return items


def _diff_items(old: TurnContext, new: TurnContext) -> list[Message]:
    items: list[Message] = []
    if new.permissions != old.permissions:
        items.append(Message(role="developer", text=new.permissions))
    if new.developer_instructions and new.developer_instructions != old.developer_instructions:
        items.append(Message(role="developer", text=new.developer_instructions))
    if new.skills and new.skills != old.skills:
        items.append(Message(role="developer", text=new.skills))
    if new.agents_md and new.agents_md != old.agents_md:
        items.append(Message(role="user", text=new.agents_md))
    env_diff = new.environment.render_diff(old.environment)
    if env_diff is not None:
        items.append(Message(role="user", text=env_diff))
    if new.subagent_context and new.subagent_context != old.subagent_context:
        items.append(Message(role="user", text=new.subagent_context))
    if new.memory and new.memory != old.memory:
        items.append(Message(role="user", text=new.memory))
    return items
