"""`SqlStore`: every `Store` operation written once, over a connection and a `Dialect`.

Each operation is a transaction body, a function of the connection, handed to the subclass's
`_write` or `_read`: the SQLite store queues it for its writer thread, the PostgreSQL store runs
it in its pool. Subclasses keep their connection and transaction machinery and override the
few steps that really differ: `_tail` (how an append finds its place) and `_lock_run`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from ._delete import DELETES, REFERRERS, DeletedRun, check_deletable, check_unreferenced, deleted
from ._errors import InvalidRecord, UnknownAgent, UnknownCall, UnknownItem, UnknownRun, taken
from ._lease import LeaseRecord, check_take
from ._records import (
    AgentRecord,
    ItemRecord,
    JournalEvent,
    LedgerEntry,
    NewEvent,
    NumberedEvent,
    RunRecord,
    changed_columns,
    check_items,
    check_started,
    event_row,
    events_to_add,
    finish_entry,
    to_row,
    updated,
)
from ._sql import (
    SQLITE,
    Conn,
    Dialect,
    assignments,
    execute,
    exists,
    fetch,
    get,
    insert,
    select,
    update,
    where,
)
from ._tails import Tail

T = TypeVar("T")

_LIVE_LEASE = "WHERE run_id = ? AND holder = ? AND released_at IS NULL"
_TAIL = (
    "SELECT run_id, (SELECT COALESCE(MAX(seq), 0) FROM events WHERE agent_id = ?), "
    "(SELECT COALESCE(MAX(run_seq), 0) FROM events WHERE events.run_id = agents.run_id) "
    "FROM agents WHERE agent_id = ?"
)


class SqlStore:
    """The `Store` operations; a subclass supplies `journal`, `_write` and `_read`."""

    dialect: ClassVar[Dialect] = SQLITE
    journal: str

    def _write(self, operation: Callable[[Conn], T]) -> Awaitable[T]:
        raise NotImplementedError

    def _read(self, operation: Callable[[Conn], T]) -> Awaitable[T]:
        raise NotImplementedError

    def _lock_run(self, conn: Conn, run_id: str) -> None:
        """Serialise the writers that decide about the run as a whole (leases, deletion)."""

    def _tail(self, conn: Conn, agent_id: str) -> Tail:
        """The agent's run, its last seq and the run's, read in one statement."""
        found = self.dialect.rows(conn, _TAIL, (agent_id, agent_id))
        if not found:
            raise UnknownAgent(agent_id, self.journal)
        run_id, last, last_in_run = found[0]
        return Tail(str(run_id), int(last), int(last_in_run))

    async def create_run(self, run: RunRecord) -> None:
        def write(conn: Conn) -> None:
            row = to_row(run)
            if exists(self.dialect, conn, "runs", run.run_id):
                raise taken("run", run.run_id, self.journal)
            insert(self.dialect, conn, "runs", [row])

        await self._write(write)

    async def get_run(self, run_id: str) -> RunRecord | None:
        return await self._read(lambda conn: get(self.dialect, conn, RunRecord, "runs", run_id))

    async def list_runs(self, *, status: str | None = None) -> list[RunRecord]:
        clause, args = ("", ()) if status is None else ("WHERE status = ?", (status,))
        sql = f"{select(RunRecord, 'runs')} {clause} ORDER BY created_at, {self.dialect.order}"
        return await self._read(lambda conn: fetch(self.dialect, conn, RunRecord, sql, args))

    async def update_run(self, run_id: str, **fields: Any) -> None:
        def write(conn: Conn) -> None:
            run = get(self.dialect, conn, RunRecord, "runs", run_id, lock=True)
            if run is None:
                raise UnknownRun(run_id, self.journal)
            update(self.dialect, conn, "runs", to_row(updated(run, fields)))

        await self._write(write)

    async def create_agent(
        self, agent: AgentRecord, *, events: Sequence[NewEvent] = ()
    ) -> list[JournalEvent]:
        def write(conn: Conn) -> list[JournalEvent]:
            row = to_row(agent)
            if exists(self.dialect, conn, "agents", agent.agent_id):
                raise taken("agent", agent.agent_id, self.journal)
            self._need_run(conn, agent.run_id)
            if agent.parent_id is not None:
                self._need_agent(conn, agent.parent_id)
            insert(self.dialect, conn, "agents", [row])
            return self._append(conn, agent.agent_id, events, agent.created_at) if events else []

        return await self._write(write)

    async def get_agent(self, agent_id: str) -> AgentRecord | None:
        return await self._read(
            lambda conn: get(self.dialect, conn, AgentRecord, "agents", agent_id)
        )

    async def list_agents(self, run_id: str) -> list[AgentRecord]:
        order = self.dialect.order
        sql = f"{select(AgentRecord, 'agents')} WHERE run_id = ? ORDER BY created_at, {order}"

        def read(conn: Conn) -> list[AgentRecord]:
            self._need_run(conn, run_id)
            return fetch(self.dialect, conn, AgentRecord, sql, (run_id,))

        return await self._read(read)

    async def update_agent(self, agent_id: str, **fields: Any) -> None:
        await self._write(lambda conn: self._update_agent(conn, agent_id, fields))

    def _update_agent(self, conn: Conn, agent_id: str, fields: Mapping[str, Any]) -> None:
        # Only the changed columns: every model response updates its agent's usage and cost.
        row = changed_columns(AgentRecord, fields)
        if not row:
            self._need_agent(conn, agent_id)
            return
        if update(self.dialect, conn, "agents", row, keys={"agent_id": agent_id}) == 0:
            raise UnknownAgent(agent_id, self.journal)

    async def append_event(
        self, agent_id: str, kind: str, payload: dict[str, Any], *, at: float
    ) -> JournalEvent:
        def write(conn: Conn) -> JournalEvent:
            return self._append(conn, agent_id, [(kind, payload)], at)[0]

        return await self._write(write)

    async def append_events(
        self,
        agent_id: str,
        events: Sequence[NewEvent],
        *,
        at: float,
        agent_update: Mapping[str, Any] | None = None,
        ledger_starts: Sequence[LedgerEntry] = (),
    ) -> list[JournalEvent]:
        def write(conn: Conn) -> list[JournalEvent]:
            added = self._append(conn, agent_id, events, at)
            if agent_update:
                self._update_agent(conn, agent_id, agent_update)
            for entry in ledger_starts:
                # The append just found the agent; a start for another agent is still checked.
                self._start_call(conn, entry, agent_known=entry.agent_id == agent_id)
            return added

        return await self._write(write)

    def _append(
        self, conn: Conn, agent_id: str, events: Sequence[NewEvent], at: float
    ) -> list[JournalEvent]:
        tail = self._tail(conn, agent_id)
        numbered = [(kind, payload, at) for kind, payload in events]
        return self._insert_events(conn, tail, agent_id, tail.last + 1, numbered)

    async def append_events_at(
        self, agent_id: str, first_seq: int, events: Sequence[NumberedEvent]
    ) -> list[JournalEvent]:
        def write(conn: Conn) -> list[JournalEvent]:
            tail = self._tail(conn, agent_id)
            sql = "SELECT kind FROM events WHERE agent_id = ? AND seq >= ? ORDER BY seq"
            have = [kind for (kind,) in self.dialect.rows(conn, sql, (agent_id, first_seq))]
            skip = events_to_add(agent_id, first_seq, [k for k, _, _ in events], tail.last, have)
            return self._insert_events(conn, tail, agent_id, first_seq + skip, events[skip:])

        return await self._write(write)

    def _insert_events(
        self,
        conn: Conn,
        tail: Tail,
        agent_id: str,
        first_seq: int,
        events: Sequence[NumberedEvent],
    ) -> list[JournalEvent]:
        """Insert `events` numbered from `first_seq`, after the run's last event."""
        rows, added = [], []
        first_in_run = tail.last_in_run + 1
        for n, (kind, payload, at) in enumerate(events):
            row, event = event_row(
                agent_id, first_seq + n, kind, payload, at, run_seq=first_in_run + n
            )
            rows.append({**row, "run_id": tail.run_id})
            added.append(event)
        insert(self.dialect, conn, "events", rows)
        return added

    async def events(self, agent_id: str, *, after_seq: int = 0) -> list[JournalEvent]:
        sql = f"{select(JournalEvent, 'events')} WHERE agent_id = ? AND seq > ? ORDER BY seq"

        def read(conn: Conn) -> list[JournalEvent]:
            self._need_agent(conn, agent_id)
            return fetch(self.dialect, conn, JournalEvent, sql, (agent_id, after_seq))

        return await self._read(read)

    async def run_events(
        self, run_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[JournalEvent]:
        sql = (
            f"{select(JournalEvent, 'events')} WHERE run_id = ? AND run_seq > ? "
            "ORDER BY run_seq LIMIT ?"
        )
        args = (run_id, after, self.dialect.no_limit if limit is None else limit)

        def read(conn: Conn) -> list[JournalEvent]:
            self._need_run(conn, run_id)
            return fetch(self.dialect, conn, JournalEvent, sql, args)

        return await self._read(read)

    async def put_items(self, run_id: str, items: Sequence[ItemRecord]) -> None:
        def write(conn: Conn) -> None:
            check_items(run_id, items)
            rows = [to_row(item) for item in items]
            self._need_run(conn, run_id)
            for item in items:
                if exists(self.dialect, conn, "items", run_id, item.index):
                    raise taken(f"run {run_id!r} item", item.index, self.journal)
            insert(self.dialect, conn, "items", rows)

        await self._write(write)

    async def update_item(self, run_id: str, index: int, **fields: Any) -> None:
        def write(conn: Conn) -> None:
            self._need_run(conn, run_id)
            item = get(self.dialect, conn, ItemRecord, "items", run_id, index, lock=True)
            if item is None:
                raise UnknownItem(run_id, index, self.journal)
            item = updated(item, fields)
            if "agent_id" in fields and item.agent_id is not None:
                self._need_agent(conn, item.agent_id)
            update(self.dialect, conn, "items", to_row(item))

        await self._write(write)

    async def items(self, run_id: str) -> list[ItemRecord]:
        sql = f'{select(ItemRecord, "items")} WHERE run_id = ? ORDER BY "index"'

        def read(conn: Conn) -> list[ItemRecord]:
            self._need_run(conn, run_id)
            return fetch(self.dialect, conn, ItemRecord, sql, (run_id,))

        return await self._read(read)

    async def ledger_start(self, entry: LedgerEntry) -> None:
        await self._write(lambda conn: self._start_call(conn, entry))

    def _start_call(self, conn: Conn, entry: LedgerEntry, *, agent_known: bool = False) -> None:
        check_started(entry)
        row = to_row(entry)
        if not agent_known:
            self._need_agent(conn, entry.agent_id)
        if not insert(self.dialect, conn, "ledger", [row], skip_taken=True):
            raise taken(f"agent {entry.agent_id!r} tool call", entry.call_id, self.journal)

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
        def write(conn: Conn) -> JournalEvent | None:
            self._finish_call(conn, agent_id, call_id, output=output, success=success, at=at)
            return None if event is None else self._append(conn, agent_id, [event], at)[0]

        return await self._write(write)

    def _finish_call(
        self, conn: Conn, agent_id: str, call_id: str, *, output: str, success: bool, at: float
    ) -> None:
        """Record a call's outcome in one statement; read the entry only to say what was wrong."""
        changes = {"state": "finished", "output": output, "success": success, "finished_at": at}
        try:
            row = changed_columns(LedgerEntry, changes)
        except InvalidRecord:
            self._started_call(conn, agent_id, call_id, output=output, success=success, at=at)
            raise
        sql = f"UPDATE ledger SET {assignments(row)} WHERE {where('ledger')} AND state = 'started'"
        if execute(self.dialect, conn, sql, [*row.values(), agent_id, call_id]) == 0:
            self._started_call(conn, agent_id, call_id, output=output, success=success, at=at)
            raise AssertionError("a started call's outcome was not recorded")  # pragma: no cover

    def _started_call(
        self, conn: Conn, agent_id: str, call_id: str, *, output: str, success: bool, at: float
    ) -> None:
        """Raise what `finish_entry` says of the entry: unknown, or finished already."""
        entry = get(self.dialect, conn, LedgerEntry, "ledger", agent_id, call_id)
        if entry is None:
            raise UnknownCall(call_id, self.journal)
        finish_entry(entry, output=output, success=success, at=at)

    async def ledger(self, agent_id: str) -> list[LedgerEntry]:
        order = self.dialect.order
        sql = f"{select(LedgerEntry, 'ledger')} WHERE agent_id = ? ORDER BY started_at, {order}"

        def read(conn: Conn) -> list[LedgerEntry]:
            self._need_agent(conn, agent_id)
            return fetch(self.dialect, conn, LedgerEntry, sql, (agent_id,))

        return await self._read(read)

    async def take_lease(self, lease: LeaseRecord) -> LeaseRecord:
        def write(conn: Conn) -> LeaseRecord:
            self._lock_run(conn, lease.run_id)  # two takers of one run decide one at a time
            live = self._live_lease(conn, lease.run_id)
            taken_lease, released = check_take(live, lease, lease.since)
            if released is not None:
                update(self.dialect, conn, "leases", to_row(released))
            if live is not None and released is None:
                update(self.dialect, conn, "leases", to_row(taken_lease))
            else:
                insert(self.dialect, conn, "leases", [to_row(taken_lease)])
            return taken_lease

        return await self._write(write)

    async def renew_lease(self, run_id: str, holder: str, *, at: float) -> bool:
        sql = f"UPDATE leases SET heartbeat_at = ? {_LIVE_LEASE}"
        args = (at, run_id, holder)
        return await self._write(lambda conn: execute(self.dialect, conn, sql, args) == 1)

    async def release_lease(self, run_id: str, holder: str, *, at: float) -> None:
        def write(conn: Conn) -> None:
            execute(self.dialect, conn, f"UPDATE leases SET released_at = ? {_LIVE_LEASE}", args)

        args = (at, run_id, holder)
        await self._write(write)

    async def leases(self, run_id: str) -> list[LeaseRecord]:
        order = self.dialect.order
        sql = f"{select(LeaseRecord, 'leases')} WHERE run_id = ? ORDER BY since, {order}"
        return await self._read(lambda conn: fetch(self.dialect, conn, LeaseRecord, sql, (run_id,)))

    async def delete_run(self, run_id: str, *, at: float, force: bool = False) -> DeletedRun:
        def write(conn: Conn) -> DeletedRun:
            # The lease takers' lock, then the appenders' row: neither slips in meanwhile.
            self._lock_run(conn, run_id)
            run = get(self.dialect, conn, RunRecord, "runs", run_id, lock=True)
            if run is None:
                raise UnknownRun(run_id, self.journal)
            live = self._live_lease(conn, run_id)
            check_deletable(run, live, at, force=force, journal=self.journal)
            others = [str(r) for (r,) in self.dialect.rows(conn, REFERRERS, (run_id,) * 4)]
            check_unreferenced(run_id, others, self.journal)
            counts = {t: execute(self.dialect, conn, q, (run_id,)) for t, q in DELETES}
            return deleted(run_id, counts)

        return await self._write(write)

    def _live_lease(self, conn: Conn, run_id: str) -> LeaseRecord | None:
        sql = f"{select(LeaseRecord, 'leases')} WHERE run_id = ? AND released_at IS NULL"
        live = fetch(self.dialect, conn, LeaseRecord, sql, (run_id,))
        return live[0] if live else None

    def _need_run(self, conn: Conn, run_id: str) -> None:
        if not exists(self.dialect, conn, "runs", run_id):
            raise UnknownRun(run_id, self.journal)

    def _need_agent(self, conn: Conn, agent_id: str) -> None:
        if not exists(self.dialect, conn, "agents", agent_id):
            raise UnknownAgent(agent_id, self.journal)
