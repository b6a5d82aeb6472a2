"""Where each agent's next events go, as the SQLite store's writer last wrote them, so that an
append need not read it again (one statement of the four or five a tool turn takes).

Only the writer's thread uses it. What it holds is true only of the file as this connection
left it, so it is dropped whenever that may no longer be so: when another connection has
committed to the file since (`PRAGMA data_version` changes; it is read as each write
transaction begins, under the write lock, so nobody can commit in between), when anything of
this connection's is rolled back (a failed operation, a failed commit), and when a run is
deleted. An agent it does not know is read from the file, as without it.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

MAX_AGENTS = 10_000
"""Agents remembered at most; past that the memory starts afresh (a long-lived service would
otherwise keep one entry for every agent it ever ran)."""


class Tail(NamedTuple):
    """Where an agent's next events go."""

    run_id: str
    last: int
    """The agent's last seq."""
    last_in_run: int
    """The run's last run_seq."""


class Tails:
    """The agents' last seq and their runs' last run_seq, as this connection wrote them."""

    def __init__(self) -> None:
        self._agents: dict[str, tuple[str, int]] = {}
        self._runs: dict[str, int] = {}
        self._version: int | None = None

    def begin(self, conn: sqlite3.Connection) -> None:
        """At the start of a write transaction: forget everything if another connection has
        committed since the last one."""
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        if version != self._version:
            self.clear()
            self._version = version

    def clear(self) -> None:
        self._agents.clear()
        self._runs.clear()

    def get(self, agent_id: str) -> Tail | None:
        known = self._agents.get(agent_id)
        if known is None:
            return None
        run_id, last = known
        last_in_run = self._runs.get(run_id)
        return None if last_in_run is None else Tail(run_id, last, last_in_run)

    def put(self, agent_id: str, tail: Tail) -> None:
        if len(self._agents) >= MAX_AGENTS and agent_id not in self._agents:
            self.clear()
        self._agents[agent_id] = (tail.run_id, tail.last)
        self._runs[tail.run_id] = tail.last_in_run
