"""The journal's PostgreSQL schema, its versioned migrations, and URLs safe to print.

Migrations run in one transaction under an advisory lock, so several processes opening a fresh
database at once migrate it exactly once. A database whose `schema_version` is newer than this
code is refused. The tables hold the same rows as SQLite's (JSON-valued fields as JSON text);
`pos` columns keep insertion order where SQLite orders by `rowid`, and `applied_ops` remembers
which writes committed, so a write retried after a dropped connection is never applied twice.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import unquote, urlsplit, urlunsplit

from ._errors import JournalUnreadable

_V1: Final = """
CREATE TABLE runs (
    pos BIGINT GENERATED ALWAYS AS IDENTITY,
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    config TEXT NOT NULL,
    summary TEXT NOT NULL
);
CREATE INDEX runs_by_age ON runs (created_at, pos);
CREATE TABLE agents (
    pos BIGINT GENERATED ALWAYS AS IDENTITY,
    agent_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    parent_id TEXT REFERENCES agents (agent_id),
    nickname TEXT NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    base_instructions TEXT NOT NULL,
    config TEXT NOT NULL,
    final_message TEXT,
    error TEXT,
    usage TEXT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    depth INTEGER NOT NULL
);
CREATE INDEX agents_by_run ON agents (run_id, created_at, pos);
CREATE TABLE events (
    agent_id TEXT NOT NULL REFERENCES agents (agent_id),
    seq BIGINT NOT NULL CHECK (seq > 0),
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    run_seq BIGINT NOT NULL,
    PRIMARY KEY (agent_id, seq)
);
CREATE UNIQUE INDEX events_by_run ON events (run_id, run_seq);
CREATE TABLE items (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    "index" BIGINT NOT NULL,
    status TEXT NOT NULL,
    input TEXT NOT NULL,
    agent_id TEXT REFERENCES agents (agent_id),
    result TEXT NOT NULL,
    error TEXT,
    usage TEXT NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, "index")
);
CREATE TABLE ledger (
    pos BIGINT GENERATED ALWAYS AS IDENTITY,
    call_id TEXT NOT NULL,
    agent_id TEXT NOT NULL REFERENCES agents (agent_id),
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('started', 'finished')),
    output TEXT,
    success BOOLEAN,
    started_at DOUBLE PRECISION NOT NULL,
    finished_at DOUBLE PRECISION,
    PRIMARY KEY (agent_id, call_id)
);
CREATE INDEX ledger_by_agent ON ledger (agent_id, started_at, pos);
CREATE TABLE leases (
    pos BIGINT GENERATED ALWAYS AS IDENTITY,
    run_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    since DOUBLE PRECISION NOT NULL,
    heartbeat_at DOUBLE PRECISION NOT NULL,
    timeout DOUBLE PRECISION NOT NULL,
    released_at DOUBLE PRECISION,
    taken_from TEXT,
    PRIMARY KEY (run_id, holder)
);
CREATE UNIQUE INDEX one_live_lease ON leases (run_id) WHERE released_at IS NULL;
CREATE TABLE applied_ops (
    op_id TEXT PRIMARY KEY,
    result TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL
);
CREATE INDEX applied_ops_by_age ON applied_ops (at);
"""
"""The schema of SQLite's versions 1 to 3 at once, and the record of committed writes."""

_V2: Final = """
CREATE TABLE IF NOT EXISTS blobs (
    sha256 TEXT PRIMARY KEY,
    data BYTEA NOT NULL,
    size BIGINT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS blob_refs (
    run_id TEXT NOT NULL,
    sha256 TEXT NOT NULL REFERENCES blobs (sha256) ON DELETE CASCADE,
    PRIMARY KEY (run_id, sha256)
);
CREATE INDEX IF NOT EXISTS blob_refs_by_blob ON blob_refs (sha256);
"""
"""Payloads by reference (`orchestrator.temporal._blobs_postgres`) and the runs that reference
them. `IF NOT EXISTS`: corral before this version made them on first use."""

NOTIFY_CHANNEL: Final = "corral_events"
"""Where the journal announces appends (`orchestrator.service._wakeups_postgres` listens)."""
MAX_NOTIFY_RUN_ID: Final = 4000
"""A longer run id is not sent (NOTIFY payloads stop at 8000 bytes): an empty payload wakes
every follower instead, so an append never fails for want of a notification."""

_V3: Final = f"""
CREATE OR REPLACE FUNCTION corral_notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    run TEXT;
BEGIN
    FOR run IN SELECT DISTINCT run_id FROM appended LOOP
        PERFORM pg_notify(
            '{NOTIFY_CHANNEL}',
            CASE WHEN octet_length(run) <= {MAX_NOTIFY_RUN_ID} THEN run ELSE '' END
        );
    END LOOP;
    RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER corral_events_notify AFTER INSERT ON events
REFERENCING NEW TABLE AS appended FOR EACH STATEMENT EXECUTE FUNCTION corral_notify_events();
"""
"""One notification per run per appending statement, sent at commit, whichever process
appended. `OR REPLACE`: corral before this version installed it when a listener started."""

_V4: Final = """
CREATE TABLE memories (
    memory_id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    text TEXT NOT NULL,
    files TEXT NOT NULL,
    run_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    embedding BYTEA NOT NULL
);
CREATE INDEX memories_by_project ON memories (project, created_at);
CREATE INDEX memories_by_run ON memories (run_id);
CREATE TABLE memory_insights (
    insight_id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    text TEXT NOT NULL,
    source_ids TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    position INTEGER NOT NULL
);
CREATE INDEX memory_insights_by_project ON memory_insights (project, position);
CREATE TABLE memory_consolidations (
    project TEXT PRIMARY KEY,
    consolidated_at DOUBLE PRECISION NOT NULL
);
"""
"""Memory across runs (`orchestrator.memory`): raw memories with their float32 embeddings as
bytea, consolidated insights (`files` and `source_ids` as JSON lists), and when each project
was last consolidated. The same tables as in the SQLite file, so memories move with the journal."""

_V5: Final = """
ALTER TABLE memories ADD COLUMN prompt_version TEXT;
ALTER TABLE memory_insights ADD COLUMN prompt_version TEXT;
"""
"""The version of the memory prompt that wrote each memory and insight (`sha256:...`), as the
SQLite file keeps it; rows from before stay NULL."""

PG_MIGRATIONS: Final[tuple[str, ...]] = (_V1, _V2, _V3, _V4, _V5)
"""`PG_MIGRATIONS[n]` takes a PostgreSQL journal from version n to n + 1; only ever append."""

PG_SCHEMA_VERSION: Final = len(PG_MIGRATIONS)

MIGRATION_LOCK: Final = 0x636F7272616C  # "corral": one advisory lock key for every migrator


def redact_url(url: str) -> str:
    """`url` with any password replaced by `***`, for messages, logs and `corral doctor`:
    the one in `user:password@`, and every query parameter libpq could read one from
    (`?password=`, `?sslpassword=`, a name percent-encoded or not)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<unparsable journal URL>"
    parts = parts._replace(
        query=_redact_query(parts.query), fragment="***" if parts.fragment else ""
    )
    if password is not None:
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{user}:***@{host}")
    shown = urlunsplit(parts)
    # `postgresql:///db` (no host) would come back as `postgresql:/db`; keep the user's spelling.
    return shown.replace(":/", ":///", 1) if url.startswith(f"{parts.scheme}:///") else shown


def _redact_query(query: str) -> str:
    pieces = []
    for piece in query.split("&"):
        name, sep, _ = piece.partition("=")
        # libpq decodes a parameter's name before it looks it up, so compare it decoded.
        secret = any(word in unquote(name).lower() for word in ("pass", "secret", "token"))
        pieces.append(f"{name}{sep}***" if sep and secret else piece)
    return "&".join(pieces)


def migrate(conn: Any, label: str, *, target: int = PG_SCHEMA_VERSION) -> tuple[int, int]:
    """Bring the database on `conn` (autocommit) to `target`; answers (from, to) versions.

    A journal already at `target` is only read, so a user with no right to create anything
    (only to read and write the journal's rows) opens it.
    """
    current = stored_version(conn)
    if current is not None and current >= target:
        refuse_newer(current, label)
        return current, current
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is None:
            _refuse_foreign(conn, label)
            conn.execute("INSERT INTO schema_version (version) VALUES (0)")
            version = 0
        else:
            version = int(row[0])
        refuse_newer(version, label)
        for script in PG_MIGRATIONS[version:target]:
            conn.execute(script)
        conn.execute("UPDATE schema_version SET version = %s", (max(version, target),))
    return version, max(version, target)


def stored_version(conn: Any) -> int | None:
    """The journal's schema version, or None when the database holds no `schema_version`."""
    found = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
    row = conn.execute("SELECT version FROM schema_version").fetchone() if found[0] else None
    return None if row is None else int(row[0])


def check_version(conn: Any, label: str) -> None:
    """Refuse a database that is not a corral journal of exactly this version (read-only use)."""
    version = stored_version(conn)
    if version is None:
        raise JournalUnreadable(
            f"{label} holds no corral journal; `corral journal migrate --url URL` creates one"
        )
    refuse_newer(version, label)
    if version < PG_SCHEMA_VERSION:
        raise JournalUnreadable(
            f"journal {label} has schema version {version} and this corral reads "
            f"{PG_SCHEMA_VERSION}; run `corral journal migrate` to upgrade it"
        )


def refuse_newer(version: int, label: str) -> None:
    if version > PG_SCHEMA_VERSION:
        raise JournalUnreadable(
            f"journal {label} has schema version {version}, newer than this corral reads "
            f"({PG_SCHEMA_VERSION}); upgrade corral to open it"
        )


def _refuse_foreign(conn: Any, label: str) -> None:
    # A database that already holds our table names but no schema_version is someone else's.
    row = conn.execute("SELECT to_regclass('runs') IS NOT NULL").fetchone()
    if row[0]:
        raise JournalUnreadable(
            f"{label} already has a `runs` table but is not a corral journal; use another database"
        )
