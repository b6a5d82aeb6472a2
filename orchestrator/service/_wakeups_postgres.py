"""Wake-ups from a PostgreSQL journal: `LISTEN` on a dedicated connection, `NOTIFY` from the
database itself on every append, whichever process (or machine) appended.

A statement-level trigger on `events` (the journal's migration 3, `agents._store._pg_schema`)
sends `pg_notify('corral_events', run_id)` once per run per statement when the transaction
commits, so writers need no code of their own and a batch of appends is one notification. The
connection that listens does nothing else; when it drops, every waiter is woken (notifications
may have been missed meanwhile: followers re-read the journal) and it reconnects with a bounded
backoff.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import anyio
from anyio.abc import TaskStatus

from corral.agents._store import NOTIFY_CHANNEL

from ._wakeups_local import LocalWakeups

logger = logging.getLogger(__name__)

CHANNEL: Final = NOTIFY_CHANNEL
APPLICATION_NAME: Final = "corral-wakeups"
"""How the listening connection shows in `pg_stat_activity`."""
CONNECT_TIMEOUT_S: Final = 10
RECONNECT_MAX_S: Final = 5.0
"""The longest pause between two attempts to connect again."""
NOTIFY_WAIT_S: Final = 30.0
"""How long the listener waits for a notification before it checks its connection."""


class PostgresWakeups(LocalWakeups):
    """Wakes followers on the notifications of the journal database at `url`."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self._url = url

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        import psycopg

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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
