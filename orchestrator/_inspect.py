"""What `corral status`, `corral runs` and `corral export` read from the journal.

Plain data out of the store, shaped for people (tables) and for programs (JSON); nothing here
changes the journal, so it is safe to run while the run it inspects is still going.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from corral.agents import AgentRecord, ItemRecord, RunRecord, Store, UnknownRun, prompt_version
from corral.agents._store import LeaseRecord


@dataclass(frozen=True)
class RunStatus:
    run: RunRecord
    agents: list[AgentRecord]
    items: list[ItemRecord]
    leases: list[LeaseRecord] = field(default_factory=list)
    """Every process that carried the run on, oldest first; a live one has no `released_at`."""
    network_denials: dict[str, int] = field(default_factory=dict)
    """Per agent id: connections corral's network proxy refused for its commands."""

    @property
    def holder(self) -> LeaseRecord | None:
        """The lease of the process carrying the run on now, if one is."""
        live = [lease for lease in self.leases if lease.released_at is None]
        return live[-1] if live else None

    @property
    def takeovers(self) -> list[LeaseRecord]:
        """Leases that took the run over from a process judged gone."""
        return [lease for lease in self.leases if lease.taken_from is not None]

    def totals(self) -> dict[str, Any]:
        usage: Counter[str] = Counter()
        for agent in self.agents:
            usage.update(agent.usage)
        return {
            "input_tokens": usage["input_tokens"],
            "output_tokens": usage["output_tokens"],
            "cached_input_tokens": usage["cached_input_tokens"],
            "cost_usd": round(sum(a.cost_usd for a in self.agents), 6),
            "network_denials": sum(self.network_denials.values()),
            "agents": dict(Counter(a.status for a in self.agents)),
            "items": dict(Counter(i.status for i in self.items)),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run.model_dump(mode="json"),
            "totals": self.totals(),
            "agents": [_agent_json(a, self.network_denials) for a in self.agents],
            "items": [i.model_dump(mode="json") for i in self.items],
            "leases": [lease.model_dump(mode="json") for lease in self.leases],
        }


async def read_status(store: Store, run_id: str) -> RunStatus:
    run = await store.get_run(run_id)
    if run is None:
        raise UnknownRun(run_id, store.journal)
    agents, items = await store.list_agents(run_id), await store.items(run_id)
    denials = await _network_denials(store, run_id)
    return RunStatus(run, agents, items, await store.leases(run_id), denials)


async def _network_denials(store: Store, run_id: str) -> dict[str, int]:
    """Refused connections per agent, from the journaled tool results (paged through)."""
    counts: Counter[str] = Counter()
    after = 0
    while page := await store.run_events(run_id, after=after, limit=_PAGE):
        for event in page:
            if event.kind == "tool_result":
                counts[event.agent_id] += len(event.payload.get("network_denials") or ())
        after = page[-1].run_seq
    return {agent: n for agent, n in counts.items() if n}


_PAGE = 5_000


def _agent_json(agent: AgentRecord, denials: dict[str, int]) -> dict[str, Any]:
    data = agent.model_dump(mode="json", exclude={"config", "base_instructions"})
    data["task"] = str(agent.config.get("task", ""))
    # Derived from the journaled base instructions, so agents run on either executor (and
    # before versions were noted) show one.
    data["prompt_version"] = prompt_version(agent.base_instructions)
    data["network_denials"] = denials.get(agent.agent_id, 0)
    return data


def run_summary(run: RunRecord) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "kind": run.kind,
        "status": run.status,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
    }
