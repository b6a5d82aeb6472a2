"""`SQLiteStore`: the journal in one SQLite file (WAL), shared safely by tasks and processes.

Each open store has one connection and one writer thread that owns it (`_writer`). Operations
queue for the writer, which runs all that are waiting in one transaction (`_batch`);
writes take the lock up front (`BEGIN IMMEDIATE`), so `seq` stays gap-free even when another
process appends to the same journal. Waits are bounded by SQLite's busy timeout.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from ._batch import Job
from ._delete import DELETES, REFERRERS, DeletedRun, check_deletable, check_unreferenced, deleted
from ._errors import StoreClosed, UnknownAgent, UnknownCall, UnknownItem, UnknownRun, taken
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
    _Record,
    changed_columns,
    check_items,
    check_started,
    event_row,
    events_to_add,
    finish_entry,
    from_row,
    to_row,
    updated,
)
from ._schema import connect, connect_read_only
from ._writer import Writer

T = TypeVar("T")
R = TypeVar("R", bound=_Record)
Sql = sqlite3.Connection

_KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "agents": ("agent_id",),
    "items": ("run_id", "index"),
    "ledger": ("agent_id", "call_id"),
    "leases": ("run_id", "holder"),
}
_LIVE_LEASE = "WHERE run_id = ? AND holder = ? AND released_at IS NULL"
_TAIL = (
    "SELECT run_id, (SELECT COALESCE(MAX(seq), 0) FROM events WHERE events.agent_id = ?1) "
    "FROM agents WHERE agent_id = ?1"
)


@asynccontextmanager
async def open_sqlite_store(path: Path, *, read_only: bool = False) -> AsyncIterator[SQLiteStore]:
    """Open the journal at `path` (creating it and its folder), and close it on exit.

    `read_only` opens an existing journal without ever writing to it (for the commands that
    only read, so a journal on read-only media can be inspected); writes then fail.
    """
    conn = await anyio.to_thread.run_sync(connect_read_only if read_only else connect, path)
    store = SQLiteStore(path, Writer(conn))
    try:
        yield store
    finally:
        with anyio.CancelScope(shield=True):
            await store.aclose()


class SQLiteStore:
    """A `Store` in an SQLite file; open it with `open_sqlite_store`."""

    def __init__(self, path: Path, writer: Writer) -> None:
        self.path = path
        self.journal = str(path)
        self._writer = writer
        self._closed = False

    async def create_run(self, run: RunRecord) -> None:
        def write(conn: Sql) -> None:
            row = to_row(run)
            if _exists(conn, "runs", run.run_id):
                raise taken("run", run.run_id, self.journal)
            _insert(conn, "runs", row)

        await self._call(write)

    async def get_run(self, run_id: str) -> RunRecord | None:
        return await self._read(lambda conn: _get(conn, RunRecord, "runs", run_id))

    async def list_runs(self, *, status: str | None = None) -> list[RunRecord]:
        where, args = ("", ()) if status is None else ("WHERE status = ?", (status,))
        sql = f"{_select(RunRecord, 'runs')} {where} ORDER BY created_at, rowid"
        return await self._read(lambda conn: _fetch(conn, RunRecord, sql, args))

    async def update_run(self, run_id: str, **fields: Any) -> None:
        def write(conn: Sql) -> None:
            run = _get(conn, RunRecord, "runs", run_id)
            if run is None:
                raise UnknownRun(run_id, self.journal)
            _update(conn, "runs", to_row(updated(run, fields)))

        await self._call(write)

    async def create_agent(self, agent: AgentRecord) -> None:
        def write(conn: Sql) -> None:
            row = to_row(agent)
            if _exists(conn, "agents", agent.agent_id):
                raise taken("agent", agent.agent_id, self.journal)
            self._need_run(conn, agent.run_id)
            if agent.parent_id is not None:
                self._need_agent(conn, agent.parent_id)
            _insert(conn, "agents", row)

        await self._call(write)

    async def get_agent(self, agent_id: str) -> AgentRecord | None:
        return await self._read(lambda conn: _get(conn, AgentRecord, "agents", agent_id))

    async def list_agents(self, run_id: str) -> list[AgentRecord]:
        def read(conn: Sql) -> list[AgentRecord]:
            self._need_run(conn, run_id)
            sql = f"{_select(AgentRecord, 'agents')} WHERE run_id = ? ORDER BY created_at, rowid"
            return _fetch(conn, AgentRecord, sql, (run_id,))

        return await self._read(read)

    async def update_agent(self, agent_id: str, **fields: Any) -> None:
        await self._call(lambda conn: self._update_agent(conn, agent_id, fields))

    def _update_agent(self, conn: Sql, agent_id: str, fields: Mapping[str, Any]) -> None:
        # Only the changed columns: every model response updates its agent's usage and cost.
        row = changed_columns(AgentRecord, fields)
        if not row:
            self._need_agent(conn, agent_id)
            return
        changes = ", ".join(f'"{name}" = :{name}' for name in row)
        sql = f"UPDATE agents SET {changes} WHERE agent_id = :agent_id"
        if conn.execute(sql, {**row, "agent_id": agent_id}).rowcount == 0:
            raise UnknownAgent(agent_id, self.journal)

    async def append_event(
        self, agent_id: str, kind: str, payload: dict[str, Any], *, at: float
    ) -> JournalEvent:
        def write(conn: Sql) -> JournalEvent:
            return self._append(conn, agent_id, [(kind, payload)], at)[0]

        return await self._call(write)

    async def append_events(
        self,
        agent_id: str,
        events: Sequence[NewEvent],
        *,
        at: float,
        agent_update: Mapping[str, Any] | None = None,
        ledger_starts: Sequence[LedgerEntry] = (),
    ) -> list[JournalEvent]:
        def write(conn: Sql) -> list[JournalEvent]:
            added = self._append(conn, agent_id, events, at)
            if agent_update:
                self._update_agent(conn, agent_id, agent_update)
            for entry in ledger_starts:
                self._start_call(conn, entry)
            return added

        return await self._call(write)

    def _append(
        self, conn: Sql, agent_id: str, events: Sequence[NewEvent], at: float
    ) -> list[JournalEvent]:
        run_id, last = self._tail(conn, agent_id)
        numbered = [(last + n, kind, payload, at) for n, (kind, payload) in enumerate(events, 1)]
        return self._insert_events(conn, run_id, agent_id, numbered)

    async def append_events_at(
        self, agent_id: str, first_seq: int, events: Sequence[NumberedEvent]
    ) -> list[JournalEvent]:
        def write(conn: Sql) -> list[JournalEvent]:
            run_id, last = self._tail(conn, agent_id)
            sql = "SELECT kind FROM events WHERE agent_id = ? AND seq >= ? ORDER BY seq"
            have = [k for (k,) in conn.execute(sql, (agent_id, first_seq))]
            kinds = [kind for kind, _, _ in events]
            skip = events_to_add(agent_id, first_seq, kinds, last, have)
            numbered = [
                (first_seq + n, kind, payload, at)
                for n, (kind, payload, at) in enumerate(events)
                if n >= skip
            ]
            return self._insert_events(conn, run_id, agent_id, numbered)

        return await self._call(write)

    def _tail(self, conn: Sql, agent_id: str) -> tuple[str, int]:
        """The agent's run and its last seq."""
        found = conn.execute(_TAIL, (agent_id,)).fetchone()
        if found is None:
            raise UnknownAgent(agent_id, self.journal)
        return str(found[0]), int(found[1])

    def _insert_events(
        self,
        conn: Sql,
        run_id: str,
        agent_id: str,
        numbered: Sequence[tuple[int, str, dict[str, Any], float]],
    ) -> list[JournalEvent]:
        """Insert events numbered `(seq, kind, payload, at)`, after the run's last event."""
        if not numbered:
            return []
        sql = "SELECT COALESCE(MAX(run_seq), 0) FROM events WHERE run_id = ?"
        (last_in_run,) = conn.execute(sql, (run_id,)).fetchone()
        added: list[JournalEvent] = []
        for n, (seq, kind, payload, at) in enumerate(numbered, 1):
            row, event = event_row(agent_id, seq, kind, payload, at, run_seq=last_in_run + n)
            _insert(conn, "events", {**row, "run_id": run_id})
            added.append(event)
        return added

    async def events(self, agent_id: str, *, after_seq: int = 0) -> list[JournalEvent]:
        def read(conn: Sql) -> list[JournalEvent]:
            self._need_agent(conn, agent_id)
            sql = f"{_select(JournalEvent, 'events')} WHERE agent_id = ? AND seq > ? ORDER BY seq"
            return _fetch(conn, JournalEvent, sql, (agent_id, after_seq))

        return await self._read(read)

    async def run_events(
        self, run_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[JournalEvent]:
        def read(conn: Sql) -> list[JournalEvent]:
            self._need_run(conn, run_id)
            sql = (
                f"{_select(JournalEvent, 'events')} WHERE run_id = ? AND run_seq > ? "
                "ORDER BY run_seq LIMIT ?"
            )
            return _fetch(conn, JournalEvent, sql, (run_id, after, -1 if limit is None else limit))

        return await self._read(read)

    async def put_items(self, run_id: str, items: Sequence[ItemRecord]) -> None:
        def write(conn: Sql) -> None:
            check_items(run_id, items)
            rows = [to_row(item) for item in items]
            self._need_run(conn, run_id)
            for item in items:
                if _exists(conn, "items", run_id, item.index):
                    raise taken(f"run {run_id!r} item", item.index, self.journal)
            for row in rows:
                _insert(conn, "items", row)

        await self._call(write)

    async def update_item(self, run_id: str, index: int, **fields: Any) -> None:
        def write(conn: Sql) -> None:
            self._need_run(conn, run_id)
            item = _get(conn, ItemRecord, "items", run_id, index)
            if item is None:
                raise UnknownItem(run_id, index, self.journal)
            item = updated(item, fields)
            if "agent_id" in fields and item.agent_id is not None:
                self._need_agent(conn, item.agent_id)
            _update(conn, "items", to_row(item))

        await self._call(write)

    async def items(self, run_id: str) -> list[ItemRecord]:
        def read(conn: Sql) -> list[ItemRecord]:
            self._need_run(conn, run_id)
            sql = f'{_select(ItemRecord, "items")} WHERE run_id = ? ORDER BY "index"'
            return _fetch(conn, ItemRecord, sql, (run_id,))

        return await self._read(read)

    async def ledger_start(self, entry: LedgerEntry) -> None:
        await self._call(lambda conn: self._start_call(conn, entry))

    def _start_call(self, conn: Sql, entry: LedgerEntry) -> None:
        check_started(entry)
        row = to_row(entry)
        self._need_agent(conn, entry.agent_id)
        if _exists(conn, "ledger", entry.agent_id, entry.call_id):
            raise taken(f"agent {entry.agent_id!r} tool call", entry.call_id, self.journal)
        _insert(conn, "ledger", row)

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
        def write(conn: Sql) -> JournalEvent | None:
            entry = _get(conn, LedgerEntry, "ledger", agent_id, call_id)
            if entry is None:
                raise UnknownCall(call_id, self.journal)
            entry = finish_entry(entry, output=output, success=success, at=at)
            _update(conn, "ledger", to_row(entry))
            return None if event is None else self._append(conn, agent_id, [event], at)[0]

        return await self._call(write)

    async def ledger(self, agent_id: str) -> list[LedgerEntry]:
        def read(conn: Sql) -> list[LedgerEntry]:
            self._need_agent(conn, agent_id)
            sql = f"{_select(LedgerEntry, 'ledger')} WHERE agent_id = ? ORDER BY started_at, rowid"
            return _fetch(conn, LedgerEntry, sql, (agent_id,))

        return await self._read(read)

    async def take_lease(self, lease: LeaseRecord) -> LeaseRecord:
        def write(conn: Sql) -> LeaseRecord:
            sql = f"{_select(LeaseRecord, 'leases')} WHERE run_id = ? AND released_at IS NULL"
            live = _fetch(conn, LeaseRecord, sql, (lease.run_id,))
            taken_lease, released = check_take(live[0] if live else None, lease, lease.since)
            if released is not None:
                _update(conn, "leases", to_row(released))
            if live and released is None:
                _update(conn, "leases", to_row(taken_lease))
            else:
                _insert(conn, "leases", to_row(taken_lease))
            return taken_lease

        return await self._call(write)

    async def renew_lease(self, run_id: str, holder: str, *, at: float) -> bool:
        def write(conn: Sql) -> bool:
            sql = f"UPDATE leases SET heartbeat_at = ? {_LIVE_LEASE}"
            return conn.execute(sql, (at, run_id, holder)).rowcount == 1

        return await self._call(write)

    async def release_lease(self, run_id: str, holder: str, *, at: float) -> None:
        def write(conn: Sql) -> None:
            sql = f"UPDATE leases SET released_at = ? {_LIVE_LEASE}"
            conn.execute(sql, (at, run_id, holder))

        await self._call(write)

    async def leases(self, run_id: str) -> list[LeaseRecord]:
        sql = f"{_select(LeaseRecord, 'leases')} WHERE run_id = ? ORDER BY since, rowid"
        return await self._read(lambda conn: _fetch(conn, LeaseRecord, sql, (run_id,)))

    async def delete_run(self, run_id: str, *, at: float, force: bool = False) -> DeletedRun:
        def write(conn: Sql) -> DeletedRun:
            run = _get(conn, RunRecord, "runs", run_id)
            if run is None:
                raise UnknownRun(run_id, self.journal)
            sql = f"{_select(LeaseRecord, 'leases')} WHERE run_id = ? AND released_at IS NULL"
            live = _fetch(conn, LeaseRecord, sql, (run_id,))
            check_deletable(run, live[0] if live else None, at, force=force, journal=self.journal)
            others = [str(r) for (r,) in conn.execute(REFERRERS, (run_id,) * 4)]
            check_unreferenced(run_id, others, self.journal)
            return deleted(run_id, {t: conn.execute(q, (run_id,)).rowcount for t, q in DELETES})

        return await self._call(write)

    async def aclose(self) -> None:
        """Run what is already queued, then close the connection; later calls raise."""
        if not self._closed:
            self._closed = True
            self._writer.stop()
        await self._writer.stopped.wait()

    async def _call(self, operation: Callable[[Sql], T], *, writes: bool = True) -> T:
        if self._closed:
            raise StoreClosed(f"journal {self.path} is closed; open it again")
        job = Job(operation, writes=writes)
        self._writer.submit(job)
        await job.done.wait()
        return job.outcome(self.path)

    async def _read(self, operation: Callable[[Sql], T]) -> T:
        return await self._call(operation, writes=False)

    def _need_run(self, conn: Sql, run_id: str) -> None:
        if not _exists(conn, "runs", run_id):
            raise UnknownRun(run_id, self.journal)

    def _need_agent(self, conn: Sql, agent_id: str) -> None:
        if not _exists(conn, "agents", agent_id):
            raise UnknownAgent(agent_id, self.journal)


@cache
def _select(cls: type[_Record], table: str) -> str:
    return f"SELECT {', '.join(_quoted(cls.model_fields))} FROM {table}"


@cache
def _where(table: str) -> str:
    return " AND ".join(f'"{name}" = ?' for name in _KEYS[table])


def _quoted(names: Iterable[str]) -> list[str]:
    return [f'"{name}"' for name in names]


def _fetch(conn: Sql, cls: type[R], sql: str, args: tuple[Any, ...]) -> list[R]:
    names = list(cls.model_fields)
    rows = conn.execute(sql, args)
    return [from_row(cls, dict(zip(names, values, strict=True))) for values in rows]


def _get(conn: Sql, cls: type[R], table: str, *key: Any) -> R | None:
    found = _fetch(conn, cls, f"{_select(cls, table)} WHERE {_where(table)}", key)
    return found[0] if found else None


def _exists(conn: Sql, table: str, *key: Any) -> bool:
    sql = f"SELECT 1 FROM {table} WHERE {_where(table)}"
    return conn.execute(sql, key).fetchone() is not None


def _insert(conn: Sql, table: str, row: Row) -> None:
    names = ", ".join(_quoted(row))
    values = ", ".join(f":{name}" for name in row)
    conn.execute(f"INSERT INTO {table} ({names}) VALUES ({values})", row)


def _update(conn: Sql, table: str, row: Row) -> None:
    keys = _KEYS[table]
    changes = ", ".join(f'"{name}" = :{name}' for name in row if name not in keys)
    where = " AND ".join(f'"{name}" = :{name}' for name in keys)
    conn.execute(f"UPDATE {table} SET {changes} WHERE {where}", row)
