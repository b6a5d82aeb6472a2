"""The journal's SQLite schema, its migrations, and opening a connection to a journal file.

Migrations are SQL scripts applied in order inside one write transaction, so two processes that
open a fresh file at once cannot both migrate it. SQLite errors become store errors here (and in
`_sqlite`), naming the file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from ._errors import JournalFailed, JournalUnreadable, StoreError
from ._text import TextSafeConnection

BUSY_TIMEOUT_MS: Final = 10_000
"""How long a connection waits for another one (maybe in another process) to release the lock."""

_V1: Final = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    config TEXT NOT NULL,
    summary TEXT NOT NULL
);
CREATE INDEX runs_by_age ON runs (created_at);
CREATE TABLE agents (
    agent_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    parent_id TEXT REFERENCES agents (agent_id),
    nickname TEXT NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    base_instructions TEXT NOT NULL,
    config TEXT NOT NULL,
    final_message TEXT,
    error TEXT,
    usage TEXT NOT NULL,
    cost_usd REAL NOT NULL,
    depth INTEGER NOT NULL
);
CREATE INDEX agents_by_run ON agents (run_id, created_at);
CREATE TABLE events (
    agent_id TEXT NOT NULL REFERENCES agents (agent_id),
    seq INTEGER NOT NULL CHECK (seq > 0),
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (agent_id, seq)
);
CREATE TABLE items (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    "index" INTEGER NOT NULL,
    status TEXT NOT NULL,
    input TEXT NOT NULL,
    agent_id TEXT REFERENCES agents (agent_id),
    result TEXT NOT NULL,
    error TEXT,
    usage TEXT NOT NULL,
    cost_usd REAL NOT NULL,
    PRIMARY KEY (run_id, "index")
);
CREATE TABLE ledger (
    call_id TEXT NOT NULL,
    agent_id TEXT NOT NULL REFERENCES agents (agent_id),
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('started', 'finished')),
    output TEXT,
    success INTEGER,
    started_at REAL NOT NULL,
    finished_at REAL,
    PRIMARY KEY (agent_id, call_id)
);
CREATE INDEX ledger_by_agent ON ledger (agent_id, started_at);
"""

_V2: Final = """
ALTER TABLE events ADD COLUMN run_id TEXT REFERENCES runs (run_id);
ALTER TABLE events ADD COLUMN run_seq INTEGER;
UPDATE events SET run_id = (SELECT run_id FROM agents WHERE agents.agent_id = events.agent_id);
UPDATE events SET run_seq = numbered.n FROM (
    SELECT agent_id, seq, ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY at, rowid) AS n
    FROM events
) AS numbered
WHERE numbered.agent_id = events.agent_id AND numbered.seq = events.seq;
CREATE UNIQUE INDEX events_by_run ON events (run_id, run_seq);
"""
"""Events get a per-run sequence; older events are numbered in the order they were journaled."""

_V3: Final = """
CREATE TABLE leases (
    run_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    since REAL NOT NULL,
    heartbeat_at REAL NOT NULL,
    timeout REAL NOT NULL,
    released_at REAL,
    taken_from TEXT,
    PRIMARY KEY (run_id, holder)
);
CREATE UNIQUE INDEX one_live_lease ON leases (run_id) WHERE released_at IS NULL;
"""
"""Run leases: which process carries a run on. No foreign key: an exec takes its lease before
its run record exists."""

MIGRATIONS: Final[tuple[str, ...]] = (_V1, _V2, _V3)
"""`MIGRATIONS[n]` takes a journal from schema version n to n + 1; only ever append."""

SCHEMA_VERSION: Final = len(MIGRATIONS)


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the journal at `path`, configured and migrated."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, factory=TextSafeConnection
        )
    except (OSError, sqlite3.Error) as exc:
        raise JournalUnreadable(
            f"cannot open journal {path}: {exc}; check that the path names a file you may write"
        ) from exc
    try:
        _configure(conn, path)
        _migrate(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def connect_read_only(path: Path) -> sqlite3.Connection:
    """Open the journal at `path` for reading only: nothing is created, migrated or written.

    A WAL journal is read through its `-shm` index when one exists or can be made; on read-only
    media where neither holds, the file is opened `immutable` (nothing can change it there).
    """
    if not path.is_file():
        raise JournalUnreadable(f"no journal at {path}; check CORRAL_HOME or the path given")
    last: sqlite3.Error | None = None
    for query in ("mode=ro", "mode=ro&immutable=1"):
        try:
            return _open_read_only(path, query)
        except sqlite3.Error as exc:
            last = exc
    assert last is not None
    raise translate(last, path) from last


def _open_read_only(path: Path, query: str) -> sqlite3.Connection:
    uri = f"{path.resolve().as_uri()}?{query}"
    conn = sqlite3.connect(
        uri, uri=True, isolation_level=None, check_same_thread=False, factory=TextSafeConnection
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _refuse_schema_code(conn, path)
        _check_readable_version(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def _refuse_schema_code(conn: sqlite3.Connection, path: Path) -> None:
    """A file read-only is often one someone else made (`corral journal copy --from`). A view
    runs its author's query whenever its name is read (a recursive one never ends), a virtual
    table runs a module's code; corral never writes either, nor a trigger."""
    found = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') "
        "OR (type = 'table' AND sql LIKE 'CREATE VIRTUAL%') LIMIT 1"
    ).fetchone()
    if found is not None:
        kind, name = found
        shown = ascii(str(name)[:40])
        raise JournalUnreadable(
            f"{path} holds a {kind} ({shown}), which corral never writes: it is not a journal "
            "corral made, and nothing was read from it"
        )


def _check_readable_version(conn: sqlite3.Connection, path: Path) -> None:
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    row = (
        conn.execute("SELECT version FROM schema_version").fetchone()
        if "schema_version" in tables
        else None
    )
    if row is None:
        raise JournalUnreadable(f"{path} is not a corral journal; point to another file")
    if int(row[0]) != SCHEMA_VERSION:
        raise JournalUnreadable(
            f"journal {path} has schema version {row[0]} and this corral reads {SCHEMA_VERSION}; "
            "it cannot be upgraded read-only: open it once where it is writable"
        )


def translate(exc: sqlite3.Error, path: Path) -> StoreError:
    """The store error for an SQLite error on the journal at `path`."""
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        seconds = BUSY_TIMEOUT_MS // 1000
        return JournalFailed(
            f"journal {path} stayed locked by another connection for over {seconds} s ({text}); "
            "nothing was written, try again"
        )
    if type(exc) is sqlite3.DatabaseError:
        return JournalUnreadable(
            f"{path} is not a readable corral journal ({text}); "
            "point to another file, or restore this one from a backup"
        )
    return JournalFailed(
        f"journal {path} failed ({text}); the operation was rolled back, earlier ones are kept"
    )


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction that takes the lock up front, so read-then-write steps are atomic."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        # Some errors (disk full, I/O) make SQLite roll back by itself.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _configure(conn: sqlite3.Connection, path: Path) -> None:
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        # WAL + synchronous=NORMAL skips the fsync on each commit. A killed process still loses
        # nothing committed (the WAL is in the OS page cache), which is the crash resume is built
        # for; only a power loss or kernel panic can drop the last few transactions, and then
        # resume simply replays from an earlier event. FULL would cost an fsync per event.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as exc:
        raise translate(exc, path) from exc
    if mode != "wal":
        raise JournalUnreadable(
            f"journal {path} cannot use write-ahead logging (SQLite chose {mode!r}); "
            "put the journal on a local disk"
        )


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the journal to `SCHEMA_VERSION` under the write lock; a journal already there is
    only read, so opening one does not queue behind other processes' writes (each worker process
    of a fan-out opens the run's journal while the others append to it)."""
    try:
        if _is_current(conn):
            return
        with _transaction(conn):
            version = _schema_version(conn, path)
            if version > SCHEMA_VERSION:
                raise JournalUnreadable(
                    f"journal {path} has schema version {version}, newer than this corral reads "
                    f"({SCHEMA_VERSION}); upgrade corral to open it"
                )
            for script in MIGRATIONS[version:]:
                for statement in _statements(script):
                    conn.execute(statement)
            conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
    except sqlite3.Error as exc:
        raise translate(exc, path) from exc


def _is_current(conn: sqlite3.Connection) -> bool:
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "schema_version" not in tables:
        return False
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return row is not None and row[0] == SCHEMA_VERSION


def _schema_version(conn: sqlite3.Connection, path: Path) -> int:
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "schema_version" in tables:
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is None or type(row[0]) is not int:
            shown = "none" if row is None else ascii(str(row[0])[:40])
            raise JournalUnreadable(
                f"journal {path} lost its schema version (found {shown}); restore it from a backup"
            )
        return row[0]
    if tables:
        raise JournalUnreadable(
            f"{path} is an SQLite database but not a corral journal; point to another file"
        )
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version (version) VALUES (0)")
    return 0


def _statements(script: str) -> Iterator[str]:
    # executescript() would commit the migration transaction, so statements run one by one.
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                yield pending
            pending = ""


def stored_version(path: Path) -> int:
    """The schema version of the journal at `path` as stored; 0 for no file or a new one.

    For `corral journal migrate`, to say which migrations opening the journal applies.
    """
    if not path.is_file():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise translate(exc, path) from exc
    try:
        tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "schema_version" not in tables:
            return 0
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        return 0 if row is None else int(row[0])
    except sqlite3.Error as exc:
        raise translate(exc, path) from exc
    finally:
        conn.close()
