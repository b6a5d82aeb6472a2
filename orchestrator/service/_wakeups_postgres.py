"""Wake-ups from a PostgreSQL journal: `LISTEN` on a dedicated connection, `NOTIFY` from the
database itself on every append, whichever process (or machine) appended.

A statement-level trigger on `events` sends `pg_notify('corral_events', run_id)` once per run
per statement when the transaction commits, so writers need no code of their own and a batch of
appends is one notification. The trigger is installed when the listener starts (under an
advisory lock, only if missing). The connection that listens does nothing else; when it drops,
every waiter is woken (notifications may have been missed meanwhile: followers re-read the
journal) and it reconnects with a bounded backoff.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import anyio
from anyio.abc import TaskStatus

from ._wakeups import LocalWakeups

logger = logging.getLogger(__name__)

CHANNEL: Final = "corral_events"
APPLICATION_NAME: Final = "corral-wakeups"
"""How the listening connection shows in `pg_stat_activity`."""
CONNECT_TIMEOUT_S: Final = 10
RECONNECT_MAX_S: Final = 5.0
"""The longest pause between two attempts to connect again."""
NOTIFY_WAIT_S: Final = 30.0
"""How long the listener waits for a notification before it checks its connection."""
TRIGGER_LOCK: Final = 0x636F7272616C + 2
"""An advisory lock key of its own (the journal's migrations use 0x636F7272616C)."""
MAX_NOTIFY_RUN_ID: Final = 4000
"""A longer run id is not sent (NOTIFY payloads stop at 8000 bytes): an empty payload wakes
every follower instead, so an append never fails for want of a notification."""

TRIGGER_SQL: Final = f"""
CREATE OR REPLACE FUNCTION corral_notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    run TEXT;
BEGIN
    FOR run IN SELECT DISTINCT run_id FROM appended LOOP
        PERFORM pg_notify(
            '{CHANNEL}', CASE WHEN octet_length(run) <= {MAX_NOTIFY_RUN_ID} THEN run ELSE '' END
        );
    END LOOP;
    RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER corral_events_notify AFTER INSERT ON events
REFERENCING NEW TABLE AS appended FOR EACH STATEMENT EXECUTE FUNCTION corral_notify_events();
"""
_HAS_TRIGGER: Final = (
    "SELECT 1 FROM pg_trigger WHERE tgname = 'corral_events_notify' AND NOT tgisinternal"
)


class PostgresWakeups(LocalWakeups):
    """Wakes followers on the notifications of the journal database at `url`."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self._url = url

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        import psycopg

        await self._install_trigger()
        started = False
        pause = 0.1
        while True:
            try:
                async with await self._connect() as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    if not started:
                        task_status.started()
                        started = True
                    self.notify_all()  # anything appended while we were not listening
                    pause = 0.1
                    await self._listen(conn)
            except (psycopg.OperationalError, psycopg.InterfaceError, TimeoutError) as exc:
                if not started:  # the journal was reachable a moment ago: say so at once
                    raise
                logger.warning("journal notifications: %s; listening again", _first_line(exc))
                self.notify_all()
            await anyio.sleep(pause)
            pause = min(pause * 2, RECONNECT_MAX_S)

    async def _listen(self, conn: Any) -> None:
        while True:
            async for note in conn.notifies(timeout=NOTIFY_WAIT_S):
                if note.payload:
                    self.notify(note.payload)
                else:
                    self.notify_all()
            await conn.execute("SELECT 1")  # a quiet spell: is the connection still there?

    async def _connect(self) -> Any:
        import psycopg

        with anyio.fail_after(CONNECT_TIMEOUT_S + 1):
            return await psycopg.AsyncConnection.connect(
                self._url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name=APPLICATION_NAME,
            )

    async def _install_trigger(self) -> None:
        """Create the trigger on `events` unless it is there (the journal is migrated first).
        A user who may not create it gets followers that re-read every `RESYNC_INTERVAL`."""
        from psycopg import errors

        try:
            await self._create_trigger()
        except errors.InsufficientPrivilege as exc:
            logger.warning(
                "cannot install the journal's notification trigger (%s); event streams of runs "
                "other processes execute will follow them about once a second. Run corral once "
                "as the owner of the events table to install it",
                _first_line(exc),
            )

    async def _create_trigger(self) -> None:
        async with await self._connect() as conn:
            if await (await conn.execute(_HAS_TRIGGER)).fetchone() is not None:
                return
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (TRIGGER_LOCK,))
                if await (await conn.execute(_HAS_TRIGGER)).fetchone() is None:
                    await conn.execute(TRIGGER_SQL)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
