"""The two fragments the orchestrator writes for agents: who a worker is, and what a child did."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from corral.agents import SUBAGENT_CONTEXT, SUBAGENT_NOTIFICATION


@dataclass(frozen=True)
class Peer:
    agent_id: str
    nickname: str
    write_set: tuple[Path, ...]


def render_subagent_context(
    *,
    me: Peer,
    parent: Peer | None,
    task: str,
    siblings: Sequence[Peer],
) -> str:
    """`<subagent_context>`: my name and id, my parent, my task, my write set, my siblings."""
    lines = [
        "",
        f"You are {me.nickname} (agent id {me.agent_id}), a worker agent.",
        f"Your parent is {parent.nickname} ({parent.agent_id})."
        if parent
        else "You have no parent.",
        f"Your write set: {_paths(me.write_set)}.",
        "Change only files in your write set; other agents own the rest.",
        "Your task:",
        task.strip(),
    ]
    if siblings:
        lines.append("Your siblings, working at the same time (do not edit their files):")
        lines.extend(f"- {s.nickname} ({s.agent_id}): {_paths(s.write_set)}" for s in siblings)
    return SUBAGENT_CONTEXT.render("\n".join(lines) + "\n")


def render_notification(*, agent_id: str, nickname: str, status: str, message: str | None) -> str:
    """`<subagent_notification>`: a JSON line saying which child reached which final status."""
    body = {"agent_id": agent_id, "nickname": nickname, "status": status, "message": message}
    return SUBAGENT_NOTIFICATION.render("\n" + json.dumps(body, ensure_ascii=False) + "\n")


def _paths(paths: Sequence[Path]) -> str:
    return ", ".join(str(p) for p in paths) if paths else "nothing (read-only)"
