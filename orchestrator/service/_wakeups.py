"""Wake-ups: a run's journal may have grown, so whoever follows it should read it again.

`Wakeups` is the seam between writers and the followers of a run's events (the service's
tailers and event streams). A follower takes `waiter(run_id)` BEFORE it reads the journal, reads
from the last `run_seq` it saw, then waits on the waiter with a bounded timeout and reads again
either way: the journal is the source of truth, a wake-up only says "now", so a lost one costs
latency, never an event. `notify(run_id)` is this process's own writers saying so.

`LocalWakeups` is the in-process twin (only `notify` wakes). `SQLiteWakeups` also notices other
processes' appends by polling the journal file's `PRAGMA data_version` every
`SQLITE_POLL_INTERVAL`; `PostgresWakeups` (`_wakeups_postgres`) listens for the database's
`NOTIFY`. `open_wakeups` picks the one for a journal and runs its listener.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import anyio
import anyio.to_thread
from anyio.abc import TaskStatus

from ._wakeups_local import LocalWakeups as LocalWakeups
from ._wakeups_local import Wakeups as Wakeups

logger = logging.getLogger(__name__)

SQLITE_POLL_INTERVAL: Final = 0.2
"""How often the SQLite journal is checked for commits of other processes while anyone waits."""
_IN_BATCH: Final = 500
"""Run ids per `IN (...)` query (SQLite allows 32,766 parameters; this keeps queries small)."""


class SQLiteWakeups(LocalWakeups):
    """Also wakes the followers of runs that other processes append to the journal at `path`:
    while anyone waits, `PRAGMA data_version` (which changes when another connection commits)
    is read every `SQLITE_POLL_INTERVAL`, and on a change the runs whose last `run_seq` moved
    are woken."""

    def __init__(self, path: Path, interval: float = SQLITE_POLL_INTERVAL) -> None:
        super().__init__()
        self._path = path
        self._interval = interval
        self._last_seq: dict[str, int] = {}

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        conn = await anyio.to_thread.run_sync(self._connect)
        try:
            task_status.started()
            version = -1
            while True:
                await anyio.sleep(self._interval)
                watched = self.watched
                if not watched:
                    continue
                try:
                    version, grown = await anyio.to_thread.run_sync(
                        self._poll, conn, version, watched
                    )
                except sqlite3.Error as exc:  # a busy or locked file: the next poll retries
                    logger.warning("polling journal %s for wake-ups: %s", self._path, exc)
                    continue
                for run_id in grown:
                    self.notify(run_id)
        finally:
            conn.close()

    def _connect(self) -> sqlite3.Connection:
        from corral.agents._store import TextSafeConnection

        uri = f"{self._path.resolve().as_uri()}?mode=ro"
        # Run ids as the journal stores them: one a client chose may hold a lone surrogate.
        return sqlite3.connect(
            uri, uri=True, isolation_level=None, check_same_thread=False, factory=TextSafeConnection
        )

    def _poll(
        self, conn: sqlite3.Connection, version: int, watched: list[str]
    ) -> tuple[int, list[str]]:
        """The file's `data_version` now, and the watched runs whose last `run_seq` moved."""
        now = int(conn.execute("PRAGMA data_version").fetchone()[0])
        if now == version:
            return now, []
        seen: dict[str, int] = {}
        for start in range(0, len(watched), _IN_BATCH):
            runs = watched[start : start + _IN_BATCH]
            marks = ",".join("?" * len(runs))
            sql = f"SELECT run_id, MAX(run_seq) FROM events WHERE run_id IN ({marks}) GROUP BY 1"
            seen.update(conn.execute(sql, runs).fetchall())
        grown = [run_id for run_id, last in seen.items() if self._last_seq.get(run_id) != last]
        self._last_seq = seen  # only the watched runs: the marks never outgrow the waiters
        return now, grown


@asynccontextmanager
async def open_wakeups(journal: str | Path) -> AsyncIterator[Wakeups]:
    """The wake-ups of the journal at `journal` (a PostgreSQL URL, `sqlite:PATH` or the path of
    an SQLite file), with its listener running until the block ends."""
    from corral.agents._store import is_postgres, parse_target

    wakeups: Wakeups
    if is_postgres(journal):
        from ._wakeups_postgres import PostgresWakeups

        wakeups = PostgresWakeups(str(journal))
    else:
        target = parse_target(journal) if isinstance(journal, str) else journal
        assert isinstance(target, Path)  # not a PostgreSQL URL: a file
        wakeups = SQLiteWakeups(target)
    async with anyio.create_task_group() as tg:
        await tg.start(wakeups.run)
        try:
            yield wakeups
        finally:
            tg.cancel_scope.cancel()
