"""The PostgreSQL journal's schema is versioned, blob tables and notification trigger included:
a journal the previous corral made (version 1, its blob tables and trigger made on the side)
migrates cleanly, and a user who may only read and write rows opens a current journal, while an
older one is refused to them with what to do."""

from __future__ import annotations

import hashlib
import time
import uuid
from urllib.parse import urlsplit, urlunsplit

import anyio
import psycopg
import pytest

from corral.agents._store import PG_SCHEMA_VERSION, JournalUnreadable, open_journal
from corral.agents._store._pg_pool import PgRunner
from corral.agents._store._pg_schema import PG_MIGRATIONS
from corral.orchestrator.temporal import PostgresBlobStore
from tests.store.conformance.test_store import make_agent, make_run

pytestmark = pytest.mark.anyio

KEY = hashlib.sha256(b"payload").hexdigest()


def rows_only_user(url: str) -> str:
    """The URL of a user who may read and write the journal's rows and create nothing."""
    role = f"corral_rw_{uuid.uuid4().hex[:12]}"  # roles are the server's, not the database's
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        conn.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        conn.execute(
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}"
        )
        conn.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}"))


def migrate_to(url: str, version: int) -> None:
    runner = PgRunner(url, "the test journal")
    runner.open()
    try:
        runner.migrate(target=version)
    finally:
        runner.close()


async def test_a_current_journal_opens_for_a_user_who_may_create_nothing(postgres_url: str) -> None:
    await anyio.to_thread.run_sync(migrate_to, postgres_url, PG_SCHEMA_VERSION)
    limited = await anyio.to_thread.run_sync(rows_only_user, postgres_url)
    async with open_journal(limited) as store:
        await store.create_run(make_run("run-1", status="done"))
        await store.create_agent(make_agent("a", "run-1"))
        await store.append_event("a", "message", {"n": 1}, at=1.0)
        blobs = PostgresBlobStore(limited, "the test journal")
        await blobs.put(KEY, b"payload", run_id="run-1")
        assert await blobs.get(KEY) == b"payload"
        assert (await store.delete_run("run-1", at=time.time())).events == 1
        assert await blobs.delete_run("run-1") == 1


async def test_an_older_journal_is_refused_to_a_user_who_may_not_migrate_it(
    postgres_url: str,
) -> None:
    await anyio.to_thread.run_sync(migrate_to, postgres_url, 1)
    limited = await anyio.to_thread.run_sync(rows_only_user, postgres_url)
    with pytest.raises(JournalUnreadable) as caught:
        async with open_journal(limited):
            pass
    message = str(caught.value)
    assert f"needs migrating to schema version {PG_SCHEMA_VERSION}" in message
    assert "run `corral journal migrate` once as the user that owns the journal's tables" in message


async def test_a_journal_the_previous_corral_made_migrates_and_keeps_blobs_and_trigger(
    postgres_url: str,
) -> None:
    # What corral before these migrations left: version 1, and beside it the blob tables (made
    # by the blob store's first use) and the trigger (by a listener), made with the same SQL.
    await anyio.to_thread.run_sync(migrate_to, postgres_url, 1)
    with psycopg.connect(postgres_url, autocommit=True, connect_timeout=10) as conn:
        for script in PG_MIGRATIONS[1:3]:  # versions 2 and 3: blobs and the trigger
            conn.execute(script)
        sql = "INSERT INTO blobs VALUES (%s, %s, 7, 1.0)"
        conn.execute(sql, (KEY, b"payload"))
        conn.execute("INSERT INTO blob_refs VALUES ('run-old', %s)", (KEY,))
    async with open_journal(postgres_url) as store:
        await store.create_run(make_run("run-1"))
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [
            (PG_SCHEMA_VERSION,)
        ]
        triggers = "SELECT count(*) FROM pg_trigger WHERE tgname = 'corral_events_notify'"
        assert conn.execute(triggers).fetchone() == (1,)
    assert await PostgresBlobStore(postgres_url, "db").get(KEY) == b"payload"
