"""The run's agent tree as `corral trace` prints it, built from the journal alone.

Each node carries its duration, model turns, tokens, cost and status; no tracing backend is
involved, so it works for any run that reached the journal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from corral.agents import AgentRecord

TURN_KIND = "model_completed"
"""The journal event that counts one turn: one completed model response."""


@dataclass(frozen=True)
class TraceNode:
    agent_id: str
    name: str
    role: str
    status: str
    duration_s: float
    turns: int
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    cost_usd: float
    error: str | None
    children: tuple[TraceNode, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "agent_id": self.agent_id,
            "name": self.name,
            "role": self.role,
            "status": self.status,
            "duration_s": round(self.duration_s, 3),
            "turns": self.turns,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "error": self.error,
            "children": [c.to_json() for c in self.children],
        }


def build_trace_tree(agents: Sequence[AgentRecord], turns: Mapping[str, int]) -> list[TraceNode]:
    """The roots of the run's tree (one for a single run, one per worker for a fan-out)."""
    known = {a.agent_id for a in agents}
    children: dict[str | None, list[AgentRecord]] = {}
    for agent in sorted(agents, key=lambda a: a.created_at):
        parent = agent.parent_id if agent.parent_id in known else None
        children.setdefault(parent, []).append(agent)

    def node(agent: AgentRecord) -> TraceNode:
        return TraceNode(
            agent_id=agent.agent_id,
            name=agent.nickname,
            role=agent.role,
            status=agent.status,
            duration_s=max(agent.updated_at - agent.created_at, 0.0),
            turns=turns.get(agent.agent_id, 0),
            input_tokens=int(agent.usage.get("input_tokens", 0)),
            output_tokens=int(agent.usage.get("output_tokens", 0)),
            cached_input_tokens=int(agent.usage.get("cached_input_tokens", 0)),
            cost_usd=agent.cost_usd,
            error=agent.error,
            children=tuple(node(c) for c in children.get(agent.agent_id, [])),
        )

    return [node(a) for a in children.get(None, [])]


def format_trace_tree(roots: Sequence[TraceNode]) -> list[str]:
    """One line per agent, children indented under their parent with tree branches."""
    lines: list[str] = []

    def walk(node: TraceNode, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        lines.append(prefix + branch + _describe(node))
        inner = prefix + ("" if top else ("   " if last else "│  "))
        for i, child in enumerate(node.children):
            walk(child, inner, i == len(node.children) - 1, False)

    for root in roots:
        walk(root, "", True, True)
    return lines


def _describe(node: TraceNode) -> str:
    text = (
        f"{node.name} ({node.agent_id}) {node.role}: {node.status}, {node.duration_s:.1f}s, "
        f"{node.turns} turns, {node.input_tokens} in ({node.cached_input_tokens} cached) / "
        f"{node.output_tokens} out tokens, ${node.cost_usd:.4f}"
    )
    return text + (f" - {node.error}" if node.error else "")
