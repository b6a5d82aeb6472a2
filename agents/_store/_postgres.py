"""`PostgresStore`: the journal in a PostgreSQL database that every machine of a deployment shares.

psycopg 3's synchronous driver and pool run each operation in a worker thread (as the SQLite
store does), one transaction each; that keeps the store independent of the event loop and lets
`_pg_pool` retry a dropped connection without ever applying a write twice. Appends lock their
run's row until commit, so `seq` and `run_seq` stay gap-free and in order however many processes
append at once; other writes rely on row locks, unique keys and (leases) an advisory lock.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, NamedTuple, TypeVar

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream

from ._delete import DELETES, REFERRERS, DeletedRun, check_deletable, check_unreferenced, deleted
from ._errors import UnknownAgent, UnknownCall, UnknownItem, UnknownRun, taken
from ._lease import LeaseRecord, check_take
from ._pg_batch import PgJob, write_loop
from ._pg_pool import PgRunner
from ._pg_rows import exists, fetch, from_pg, get, insert, params, quoted, select, update, where
from ._pg_schema import check_version, redact_url
from ._records import (
    AgentRecord,
    ItemRecord,
    JournalEvent,
    LedgerEntry,
    NewEvent,
    NumberedEvent,
    RunRecord,
    _Record,
    check_items,
    check_started,
    events_to_add,
    finish_entry,
    from_row,
    make_event,
    to_row,
    updated,
)

Conn = Any
T = TypeVar("T")
R = TypeVar("R", bound=_Record)
_LIVE_LEASE = "WHERE run_id = %s AND holder = %s AND released_at IS NULL"


@asynccontextmanager
async def open_postgres_store(url: str, *, read_only: bool = False) -> AsyncIterator[PostgresStore]:
    """Open the journal in the database at `url` (migrating it first), and close it on exit.

    `read_only` never writes: the journal must exist at this code's schema version.
    """
    runner = PgRunner(url, redact_url(url), read_only=read_only)
    await anyio.to_thread.run_sync(runner.open)
    try:
        if read_only:
            await runner.run(lambda conn: check_version(conn, runner.label), writes=False)
        else:
            await anyio.to_thread.run_sync(lambda: _migrate_and_tidy(runner))
    except BaseException:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(runner.close)
        raise
    send, receive = anyio.create_memory_object_stream[PgJob[Any]](0)
    store = PostgresStore(runner)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_writer, runner, receive, store.stopped)
        runner.attach_writer(send)
        try:
            yield store
        finally:
            with anyio.CancelScope(shield=True):
                await store.aclose()


async def _writer(
    runner: PgRunner, receive: MemoryObjectReceiveStream[PgJob[Any]], stopped: anyio.Event
) -> None:
    try:
        await write_loop(runner, receive)
    finally:
        stopped.set()


def _migrate_and_tidy(runner: PgRunner) -> None:
    runner.migrate()
    runner.forget_old_ops()


class _Tail(NamedTuple):
    run_id: str
    last: int
    """The agent's last seq."""
    last_in_run: int
    """The run's last run_seq."""


def _run_lock(run_id: str) -> int:
    # A signed 64-bit key per run; two runs sharing one only wait for each other.
    # `surrogatepass`: a run id from a model's JSON may hold a lone surrogate.
    key = hashlib.blake2b(run_id.encode(errors="surrogatepass"), digest_size=8).digest()
    return int.from_bytes(key, signed=True)


class PostgresStore:
    """A `Store` in a PostgreSQL database; open it with `open_postgres_store`."""

    def __init__(self, runner: PgRunner) -> None:
        self.journal = runner.label
        self.stopped = anyio.Event()
        self._runner = runner

    async def create_run(self, run: RunRecord) -> None:
        def write(conn: Conn) -> None:
            row = to_row(run)
            if exists(conn, "runs", run.run_id):
                raise taken("run", run.run_id, self.journal)
            insert(conn, "runs", row)

        await self._runner.run(write)

    async def get_run(self, run_id: str) -> RunRecord | None:
        return await self._read(lambda conn: get(conn, RunRecord, "runs", run_id))

    async def list_runs(self, *, status: str | None = None) -> list[RunRecord]:
        where, args = ("", ()) if status is None else ("WHERE status = %s", (status,))
        sql = f"{select(RunRecord, 'runs')} {where} ORDER BY created_at, pos"
        return await self._read(lambda conn: fetch(conn, RunRecord, sql, args))

    async def update_run(self, run_id: str, **fields: Any) -> None:
        def write(conn: Conn) -> None:
            run = _locked(conn, RunRecord, "runs", run_id)
            if run is None:
                raise UnknownRun(run_id, self.journal)
            update(conn, "runs", to_row(updated(run, fields)))

        await self._runner.run(write)

    async def create_agent(self, agent: AgentRecord) -> None:
        def write(conn: Conn) -> None:
            row = to_row(agent)
            if exists(conn, "agents", agent.agent_id):
                raise taken("agent", agent.agent_id, self.journal)
            self._need_run(conn, agent.run_id)
            if agent.parent_id is not None:
                self._need_agent(conn, agent.parent_id)
            insert(conn, "agents", row)

        await self._runner.run(write)

    async def get_agent(self, agent_id: str) -> AgentRecord | None:
        return await self._read(lambda conn: get(conn, AgentRecord, "agents", agent_id))

    async def list_agents(self, run_id: str) -> list[AgentRecord]:
        def read(conn: Conn) -> list[AgentRecord]:
            self._need_run(conn, run_id)
            sql = f"{select(AgentRecord, 'agents')} WHERE run_id = %s ORDER BY created_at, pos"
            return fetch(conn, AgentRecord, sql, (run_id,))

        return await self._read(read)

    async def update_agent(self, agent_id: str, **fields: Any) -> None:
        await self._runner.run(lambda conn: self._update_agent(conn, agent_id, fields))

    def _update_agent(self, conn: Conn, agent_id: str, fields: Mapping[str, Any]) -> None:
        agent = _locked(conn, AgentRecord, "agents", agent_id)
        if agent is None:
            raise UnknownAgent(agent_id, self.journal)
        update(conn, "agents", to_row(updated(agent, dict(fields))))

    async def append_event(
        self, agent_id: str, kind: str, payload: dict[str, Any], *, at: float
    ) -> JournalEvent:
        def write(conn: Conn) -> JournalEvent:
            return self._append(conn, agent_id, [(kind, payload)], at)[0]

        return await self._runner.run(write)

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
                self._start_call(conn, entry)
            return added

        return await self._runner.run(write)

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
            sql = "SELECT kind FROM events WHERE agent_id = %s AND seq >= %s ORDER BY seq"
            rows = conn.execute(sql, params((agent_id, first_seq))).fetchall()
            have = [from_pg(kind) for (kind,) in rows]
            skip = events_to_add(agent_id, first_seq, [k for k, _, _ in events], tail.last, have)
            return self._insert_events(conn, tail, agent_id, first_seq + skip, list(events)[skip:])

        return await self._runner.run(write)

    def _tail(self, conn: Conn, agent_id: str) -> _Tail:
        """The agent's run, its last seq and the run's, with the run's row locked until commit.

        The lock serialises the run's appenders (in every process), so `seq` and `run_seq` are
        read after the previous appender committed: gap-free, never taken twice.
        """
        sql = (
            "SELECT run_id FROM runs WHERE run_id = "
            "(SELECT run_id FROM agents WHERE agent_id = %s) FOR NO KEY UPDATE"
        )
        found = conn.execute(sql, params((agent_id,))).fetchone()
        if found is None:
            raise UnknownAgent(agent_id, self.journal)
        run_id = str(from_pg(found[0]))
        # Read after the lock is held, so in a statement (and a snapshot) of its own.
        sql = (
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM events WHERE agent_id = %s), "
            "(SELECT COALESCE(MAX(run_seq), 0) FROM events WHERE run_id = %s)"
        )
        last, last_in_run = conn.execute(sql, params((agent_id, run_id))).fetchone()
        return _Tail(run_id, int(last), int(last_in_run))

    def _insert_events(
        self,
        conn: Conn,
        tail: _Tail,
        agent_id: str,
        first_seq: int,
        events: Sequence[NumberedEvent],
    ) -> list[JournalEvent]:
        if not events:
            return []
        first_in_run = tail.last_in_run + 1
        made = [
            make_event(agent_id, first_seq + n, kind, payload, at, run_seq=first_in_run + n)
            for n, (kind, payload, at) in enumerate(events)
        ]
        rows = [{**to_row(event), "run_id": tail.run_id} for event in made]
        # Answered as read back from their rows (JSON round-tripped), as the other stores do.
        made = [from_row(JournalEvent, row) for row in rows]
        names = list(rows[0])
        sql = f"INSERT INTO events ({', '.join(quoted(names))}) VALUES "
        sql += ", ".join(["(" + ", ".join(["%s"] * len(names)) + ")"] * len(rows))
        conn.execute(sql, params(v for row in rows for v in row.values()))
        return made

    async def events(self, agent_id: str, *, after_seq: int = 0) -> list[JournalEvent]:
        def read(conn: Conn) -> list[JournalEvent]:
            self._need_agent(conn, agent_id)
            sql = f"{select(JournalEvent, 'events')} WHERE agent_id = %s AND seq > %s ORDER BY seq"
            return fetch(conn, JournalEvent, sql, (agent_id, after_seq))

        return await self._read(read)

    async def run_events(
        self, run_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[JournalEvent]:
        def read(conn: Conn) -> list[JournalEvent]:
            self._need_run(conn, run_id)
            sql = (
                f"{select(JournalEvent, 'events')} WHERE run_id = %s AND run_seq > %s "
                "ORDER BY run_seq LIMIT %s"
            )
            return fetch(conn, JournalEvent, sql, (run_id, after, limit))

        return await self._read(read)

    async def put_items(self, run_id: str, items: Sequence[ItemRecord]) -> None:
        def write(conn: Conn) -> None:
            check_items(run_id, items)
            rows = [to_row(item) for item in items]
            self._need_run(conn, run_id)
            for item in items:
                if exists(conn, "items", run_id, item.index):
                    raise taken(f"run {run_id!r} item", item.index, self.journal)
            for row in rows:
                insert(conn, "items", row)

        await self._runner.run(write)

    async def update_item(self, run_id: str, index: int, **fields: Any) -> None:
        def write(conn: Conn) -> None:
            self._need_run(conn, run_id)
            item = _locked(conn, ItemRecord, "items", run_id, index)
            if item is None:
                raise UnknownItem(run_id, index, self.journal)
            item = updated(item, fields)
            if "agent_id" in fields and item.agent_id is not None:
                self._need_agent(conn, item.agent_id)
            update(conn, "items", to_row(item))

        await self._runner.run(write)

    async def items(self, run_id: str) -> list[ItemRecord]:
        def read(conn: Conn) -> list[ItemRecord]:
            self._need_run(conn, run_id)
            sql = f'{select(ItemRecord, "items")} WHERE run_id = %s ORDER BY "index"'
            return fetch(conn, ItemRecord, sql, (run_id,))

        return await self._read(read)

    async def ledger_start(self, entry: LedgerEntry) -> None:
        await self._runner.run(lambda conn: self._start_call(conn, entry))

    def _start_call(self, conn: Conn, entry: LedgerEntry) -> None:
        check_started(entry)
        row = to_row(entry)
        self._need_agent(conn, entry.agent_id)
        if exists(conn, "ledger", entry.agent_id, entry.call_id):
            raise taken(f"agent {entry.agent_id!r} tool call", entry.call_id, self.journal)
        insert(conn, "ledger", row)

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
            entry = _locked(conn, LedgerEntry, "ledger", agent_id, call_id)
            if entry is None:
                raise UnknownCall(call_id, self.journal)
            entry = finish_entry(entry, output=output, success=success, at=at)
            update(conn, "ledger", to_row(entry))
            return None if event is None else self._append(conn, agent_id, [event], at)[0]

        return await self._runner.run(write)

    async def ledger(self, agent_id: str) -> list[LedgerEntry]:
        def read(conn: Conn) -> list[LedgerEntry]:
            self._need_agent(conn, agent_id)
            sql = f"{select(LedgerEntry, 'ledger')} WHERE agent_id = %s ORDER BY started_at, pos"
            return fetch(conn, LedgerEntry, sql, (agent_id,))

        return await self._read(read)

    async def take_lease(self, lease: LeaseRecord) -> LeaseRecord:
        def write(conn: Conn) -> LeaseRecord:
            # The run's lock: two takers of one run decide one after the other.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_run_lock(lease.run_id),))
            sql = f"{select(LeaseRecord, 'leases')} WHERE run_id = %s AND released_at IS NULL"
            live = fetch(conn, LeaseRecord, sql, (lease.run_id,))
            taken_lease, released = check_take(live[0] if live else None, lease, lease.since)
            if released is not None:
                update(conn, "leases", to_row(released))
            if live and released is None:
                update(conn, "leases", to_row(taken_lease))
            else:
                insert(conn, "leases", to_row(taken_lease))
            return taken_lease

        return await self._runner.run(write)

    async def renew_lease(self, run_id: str, holder: str, *, at: float) -> bool:
        def write(conn: Conn) -> bool:
            sql = f"UPDATE leases SET heartbeat_at = %s {_LIVE_LEASE}"
            return bool(conn.execute(sql, params((at, run_id, holder))).rowcount == 1)

        return await self._runner.run(write)

    async def release_lease(self, run_id: str, holder: str, *, at: float) -> None:
        def write(conn: Conn) -> None:
            sql = f"UPDATE leases SET released_at = %s {_LIVE_LEASE}"
            conn.execute(sql, params((at, run_id, holder)))

        await self._runner.run(write)

    async def leases(self, run_id: str) -> list[LeaseRecord]:
        sql = f"{select(LeaseRecord, 'leases')} WHERE run_id = %s ORDER BY since, pos"
        return await self._read(lambda conn: fetch(conn, LeaseRecord, sql, (run_id,)))

    async def delete_run(self, run_id: str, *, at: float, force: bool = False) -> DeletedRun:
        def write(conn: Conn) -> DeletedRun:
            # The lease takers' lock, then the appenders' row: neither slips in meanwhile.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_run_lock(run_id),))
            run = _locked(conn, RunRecord, "runs", run_id)
            if run is None:
                raise UnknownRun(run_id, self.journal)
            sql = f"{select(LeaseRecord, 'leases')} WHERE run_id = %s AND released_at IS NULL"
            live = fetch(conn, LeaseRecord, sql, (run_id,))
            check_deletable(run, live[0] if live else None, at, force=force, journal=self.journal)
            rows = conn.execute(_pg(REFERRERS), params((run_id,) * 4)).fetchall()
            check_unreferenced(run_id, [str(from_pg(r)) for (r,) in rows], self.journal)
            counts = {t: conn.execute(_pg(q), params((run_id,))).rowcount for t, q in DELETES}
            return deleted(run_id, counts)

        return await self._runner.run(write)

    async def aclose(self) -> None:
        """Run the writes already queued, then close the pool; later calls raise `StoreClosed`.
        Closing twice is harmless."""
        with anyio.CancelScope(shield=True):
            self._runner.stop_writes()
            await self.stopped.wait()
            if not self._runner.closed:
                await anyio.to_thread.run_sync(self._runner.close)

    async def _read(self, operation: Callable[[Conn], T]) -> T:
        return await self._runner.run(operation, writes=False)

    def _need_run(self, conn: Conn, run_id: str) -> None:
        if not exists(conn, "runs", run_id):
            raise UnknownRun(run_id, self.journal)

    def _need_agent(self, conn: Conn, agent_id: str) -> None:
        if not exists(conn, "agents", agent_id):
            raise UnknownAgent(agent_id, self.journal)


def _pg(sql: str) -> str:
    """SQL written with SQLite's `?` placeholders, in psycopg's."""
    return sql.replace("?", "%s")


def _locked(conn: Conn, cls: type[R], table: str, *key: Any) -> R | None:
    """The record at `key`, its row locked until commit so a concurrent update waits."""
    rows = fetch(conn, cls, f"{select(cls, table)} WHERE {where(table)} FOR UPDATE", key)
    return rows[0] if rows else None
