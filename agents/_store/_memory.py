"""`MemoryStore`: the in-memory twin of the SQLite journal, for tests and throwaway runs.

It keeps the same rows the SQLite store writes (JSON-valued fields as JSON text) and makes the
same checks in the same order, so it raises the same errors and assigns the same `seq` numbers.
Each method yields once to the event loop, then runs without awaiting, which makes it atomic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio.lowlevel

from ._delete import DeletedRun, check_deletable, check_unreferenced
from ._errors import (
    StoreClosed,
    UnknownAgent,
    UnknownCall,
    UnknownItem,
    UnknownRun,
    taken,
)
from ._lease import LeaseRecord, check_take
from ._records import (
    AgentRecord,
    ItemRecord,
    JournalEvent,
    LedgerEntry,
    NewEvent,
    NumberedEvent,
    Row,
    RunRecord,
    check_items,
    check_started,
    events_to_add,
    finish_entry,
    from_row,
    make_event,
    to_row,
    updated,
)


class MemoryStore:
    """A `Store` held in dictionaries; nothing survives the process."""

    def __init__(self, name: str = "the in-memory journal") -> None:
        self.journal = name
        self._runs: dict[str, Row] = {}
        self._agents: dict[str, Row] = {}
        self._events: dict[str, list[Row]] = {}
        self._run_events: dict[str, list[Row]] = {}
        self._items: dict[str, dict[int, Row]] = {}
        self._ledger: dict[tuple[str, str], Row] = {}
        self._leases: dict[tuple[str, str], Row] = {}
        self._closed = False

    async def create_run(self, run: RunRecord) -> None:
        await self._enter()
        row = to_row(run)
        if run.run_id in self._runs:
            raise taken("run", run.run_id, self.journal)
        self._runs[run.run_id] = row
        self._items[run.run_id] = {}
        self._run_events[run.run_id] = []

    async def get_run(self, run_id: str) -> RunRecord | None:
        await self._enter()
        row = self._runs.get(run_id)
        return None if row is None else from_row(RunRecord, row)

    async def list_runs(self, *, status: str | None = None) -> list[RunRecord]:
        await self._enter()
        rows = [row for row in self._runs.values() if status is None or row["status"] == status]
        return [from_row(RunRecord, row) for row in sorted(rows, key=lambda r: r["created_at"])]

    async def update_run(self, run_id: str, **fields: Any) -> None:
        await self._enter()
        run = from_row(RunRecord, self._run_row(run_id))
        self._runs[run_id] = to_row(updated(run, fields))

    async def create_agent(
        self, agent: AgentRecord, *, events: Sequence[NewEvent] = ()
    ) -> list[JournalEvent]:
        await self._enter()
        row = to_row(agent)
        if agent.agent_id in self._agents:
            raise taken("agent", agent.agent_id, self.journal)
        self._run_row(agent.run_id)
        if agent.parent_id is not None:
            self._agent_row(agent.parent_id)
        at = agent.created_at
        for kind, payload in events:  # all or none: check them all before adding one
            to_row(make_event(agent.agent_id, 1, kind, payload, at, run_seq=1))
        self._agents[agent.agent_id] = row
        self._events[agent.agent_id] = []
        return [self._add_event(agent.agent_id, kind, payload, at) for kind, payload in events]

    async def get_agent(self, agent_id: str) -> AgentRecord | None:
        await self._enter()
        row = self._agents.get(agent_id)
        return None if row is None else from_row(AgentRecord, row)

    async def list_agents(self, run_id: str) -> list[AgentRecord]:
        await self._enter()
        self._run_row(run_id)
        rows = [row for row in self._agents.values() if row["run_id"] == run_id]
        return [from_row(AgentRecord, row) for row in sorted(rows, key=lambda r: r["created_at"])]

    async def update_agent(self, agent_id: str, **fields: Any) -> None:
        await self._enter()
        agent = from_row(AgentRecord, self._agent_row(agent_id))
        self._agents[agent_id] = to_row(updated(agent, fields))

    async def append_event(
        self, agent_id: str, kind: str, payload: dict[str, Any], *, at: float
    ) -> JournalEvent:
        await self._enter()
        return self._add_event(agent_id, kind, payload, at)

    async def append_events(
        self,
        agent_id: str,
        events: Sequence[NewEvent],
        *,
        at: float,
        agent_update: Mapping[str, Any] | None = None,
        ledger_starts: Sequence[LedgerEntry] = (),
    ) -> list[JournalEvent]:
        await self._enter()
        agent = self._agent_row(agent_id)
        for kind, payload in events:  # all or none: check them all before adding one
            to_row(make_event(agent_id, 1, kind, payload, at, run_seq=1))
        row = to_row(updated(from_row(AgentRecord, agent), agent_update)) if agent_update else None
        started = self._ledger_rows(ledger_starts)
        if row is not None:
            self._agents[agent_id] = row
        self._ledger.update(started)
        return [self._add_event(agent_id, kind, payload, at) for kind, payload in events]

    async def append_events_at(
        self, agent_id: str, first_seq: int, events: Sequence[NumberedEvent]
    ) -> list[JournalEvent]:
        await self._enter()
        self._agent_row(agent_id)
        held = self._events[agent_id]
        have = [row["kind"] for row in held[max(first_seq - 1, 0) :]]
        skip = events_to_add(agent_id, first_seq, [e[0] for e in events], len(held), have)
        for kind, payload, at in events[skip:]:  # all or none: check them all before adding one
            to_row(make_event(agent_id, 1, kind, payload, at, run_seq=1))
        return [self._add_event(agent_id, *event) for event in events[skip:]]

    def _add_event(
        self, agent_id: str, kind: str, payload: dict[str, Any], at: float
    ) -> JournalEvent:
        run_id = self._agent_row(agent_id)["run_id"]
        events, in_run = self._events[agent_id], self._run_events[run_id]
        event = make_event(agent_id, len(events) + 1, kind, payload, at, run_seq=len(in_run) + 1)
        row = to_row(event)
        events.append(row)
        in_run.append(row)
        return from_row(JournalEvent, row)

    async def events(self, agent_id: str, *, after_seq: int = 0) -> list[JournalEvent]:
        await self._enter()
        self._agent_row(agent_id)
        rows = self._events[agent_id][max(after_seq, 0) :]
        return [from_row(JournalEvent, row) for row in rows]

    async def run_events(
        self, run_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[JournalEvent]:
        await self._enter()
        self._run_row(run_id)
        start = max(after, 0)
        rows = self._run_events[run_id][start : None if limit is None else start + limit]
        return [from_row(JournalEvent, row) for row in rows]

    async def put_items(self, run_id: str, items: Sequence[ItemRecord]) -> None:
        await self._enter()
        check_items(run_id, items)
        rows = [to_row(item) for item in items]
        self._run_row(run_id)
        existing = self._items[run_id]
        for item in items:
            if item.index in existing:
                raise taken(f"run {run_id!r} item", item.index, self.journal)
        existing.update((row["index"], row) for row in rows)

    async def update_item(self, run_id: str, index: int, **fields: Any) -> None:
        await self._enter()
        self._run_row(run_id)
        row = self._items[run_id].get(index)
        if row is None:
            raise UnknownItem(run_id, index, self.journal)
        item = updated(from_row(ItemRecord, row), fields)
        if "agent_id" in fields and item.agent_id is not None:
            self._agent_row(item.agent_id)
        self._items[run_id][index] = to_row(item)

    async def items(self, run_id: str) -> list[ItemRecord]:
        await self._enter()
        self._run_row(run_id)
        rows = sorted(self._items[run_id].items())
        return [from_row(ItemRecord, row) for _, row in rows]

    async def ledger_start(self, entry: LedgerEntry) -> None:
        await self._enter()
        self._ledger.update(self._ledger_rows([entry]))

    def _ledger_rows(self, entries: Sequence[LedgerEntry]) -> dict[tuple[str, str], Row]:
        """The rows that start `entries`, each checked as `ledger_start` checks it."""
        rows: dict[tuple[str, str], Row] = {}
        for entry in entries:
            check_started(entry)
            row = to_row(entry)
            self._agent_row(entry.agent_id)
            key = (entry.agent_id, entry.call_id)
            if key in self._ledger or key in rows:
                raise taken(f"agent {entry.agent_id!r} tool call", entry.call_id, self.journal)
            rows[key] = row
        return rows

    async def ledger_finish(
        self,
        agent_id: str,
        call_id: str,
        *,
        output: str,
        success: bool,
        at: float,
        event: NewEvent | None = None,
    ) -> JournalEvent | None:
        await self._enter()
        row = self._ledger.get((agent_id, call_id))
        if row is None:
            raise UnknownCall(call_id, self.journal)
        entry = finish_entry(from_row(LedgerEntry, row), output=output, success=success, at=at)
        if event is not None:  # checked before anything changes: all or none
            to_row(make_event(agent_id, 1, *event, at, run_seq=1))
        self._ledger[agent_id, call_id] = to_row(entry)
        return None if event is None else self._add_event(agent_id, *event, at)

    async def ledger(self, agent_id: str) -> list[LedgerEntry]:
        await self._enter()
        self._agent_row(agent_id)
        rows = [row for row in self._ledger.values() if row["agent_id"] == agent_id]
        return [from_row(LedgerEntry, row) for row in sorted(rows, key=lambda r: r["started_at"])]

    async def take_lease(self, lease: LeaseRecord) -> LeaseRecord:
        await self._enter()
        live = next((x for x in self._run_leases(lease.run_id) if x.released_at is None), None)
        taken_lease, released = check_take(live, lease, lease.since)
        for record in (released, taken_lease):
            if record is not None:
                self._leases[record.run_id, record.holder] = to_row(record)
        return taken_lease

    async def renew_lease(self, run_id: str, holder: str, *, at: float) -> bool:
        await self._enter()
        row = self._leases.get((run_id, holder))
        if row is None or row["released_at"] is not None:
            return False
        row["heartbeat_at"] = at
        return True

    async def release_lease(self, run_id: str, holder: str, *, at: float) -> None:
        await self._enter()
        row = self._leases.get((run_id, holder))
        if row is not None and row["released_at"] is None:
            row["released_at"] = at

    async def leases(self, run_id: str) -> list[LeaseRecord]:
        await self._enter()
        return self._run_leases(run_id)

    def _run_leases(self, run_id: str) -> list[LeaseRecord]:
        rows = [row for (run, _), row in self._leases.items() if run == run_id]
        return [from_row(LeaseRecord, row) for row in sorted(rows, key=lambda r: r["since"])]

    async def delete_run(self, run_id: str, *, at: float, force: bool = False) -> DeletedRun:
        await self._enter()
        run = from_row(RunRecord, self._run_row(run_id))
        leases = self._run_leases(run_id)
        live = next((x for x in leases if x.released_at is None), None)
        check_deletable(run, live, at, force=force, journal=self.journal)
        agents = {a for a, row in self._agents.items() if row["run_id"] == run_id}
        others = [row["run_id"] for row in self._agents.values() if row["parent_id"] in agents]
        others += [
            r
            for r, items in self._items.items()
            for row in items.values()
            if row["agent_id"] in agents
        ]
        check_unreferenced(run_id, [r for r in others if r != run_id], self.journal)
        ledger = [key for key in self._ledger if key[0] in agents]
        for key in ledger:
            del self._ledger[key]
        for lease in leases:
            del self._leases[run_id, lease.holder]
        for agent_id in agents:
            del self._agents[agent_id], self._events[agent_id]
        events, items = self._run_events.pop(run_id), self._items.pop(run_id)
        del self._runs[run_id]
        return DeletedRun(
            run_id=run_id,
            agents=len(agents),
            events=len(events),
            items=len(items),
            ledger=len(ledger),
            leases=len(leases),
        )

    async def aclose(self) -> None:
        self._closed = True

    async def _enter(self) -> None:
        await anyio.lowlevel.checkpoint()
        if self._closed:
            raise StoreClosed(f"{self.journal} is closed; open a new store")

    def _run_row(self, run_id: str) -> Row:
        row = self._runs.get(run_id)
        if row is None:
            raise UnknownRun(run_id, self.journal)
        return row

    def _agent_row(self, agent_id: str) -> Row:
        row = self._agents.get(agent_id)
        if row is None:
            raise UnknownAgent(agent_id, self.journal)
        return row
