"""Interactive command sessions: who owns which running command, and the caps on how many.

A run holds one `ExecSessions`; `exec_command` adds a session for the calling agent and
`write_stdin` finds it again, by id and owner only (another agent's session is as unknown as one
that never existed). The runtime stops an agent's sessions when the agent ends and every session
when the run stops (`aclose`). Sessions live in this process only: after a resume their ids are
unknown, and the model is told the session is gone rather than attached to something else.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
from anyio.abc import TaskGroup

from ._errors import InvalidInput, OperationFailed
from ._sandbox import InteractiveProcess

logger = logging.getLogger(__name__)

MAX_SESSIONS = 64
"""Live sessions in one corral process, all runs together (Codex's
`MAX_UNIFIED_EXEC_PROCESSES`)."""
MAX_SESSIONS_PER_AGENT = 8
"""Live sessions one agent may hold: a loop of `exec_command` calls cannot take them all."""
# How long stopping every session of an ending agent or run may take.
STOP_TIMEOUT = 10.0


class SessionQuota:
    """How many sessions may live at once across every `ExecSessions` that shares it."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self.live = 0


PROCESS_QUOTA = SessionQuota()
"""The process's own quota: every run's sessions count against it."""


@dataclass
class ExecSession:
    """One running command, its owner and its id (what the model passes to `write_stdin`)."""

    session_id: int
    agent_id: str
    command: str
    process: InteractiveProcess


class ExecSessions:
    """The run's live sessions, capped per agent and by the process's `quota`."""

    def __init__(
        self,
        tg: TaskGroup | None = None,
        *,
        max_per_agent: int = MAX_SESSIONS_PER_AGENT,
        quota: SessionQuota = PROCESS_QUOTA,
    ) -> None:
        self._tg = tg
        """Where each session's output is pumped; None: output is read only during calls."""
        self._sessions: dict[int, ExecSession] = {}
        self._quota = quota
        self._max_per_agent = max_per_agent
        self._closed = False
        self._lock = anyio.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def owned_by(self, agent_id: str) -> list[ExecSession]:
        return [s for s in self._sessions.values() if s.agent_id == agent_id]

    def check_room(self, agent_id: str) -> None:
        """Refuse a new session for `agent_id` when a cap is reached (before anything starts)."""
        if self._closed:
            raise OperationFailed("the run is stopping: no new command sessions start")
        mine = len(self.owned_by(agent_id))
        if mine >= self._max_per_agent:
            raise InvalidInput(
                f"you already have {mine} running command sessions (the limit); end one"
                " (write_stdin with Ctrl-C, \\u0003) or wait for one to exit, then try again"
            )
        quota = self._quota
        if quota.live >= quota.limit:
            raise OperationFailed(
                f"this corral process has {quota.live} running command sessions (the limit);"
                " wait for one to exit, then try again"
            )

    async def add(self, agent_id: str, command: str, process: InteractiveProcess) -> ExecSession:
        """Own `process` for `agent_id`; stops it and raises if a cap was reached meanwhile."""
        async with self._lock:
            try:
                self.check_room(agent_id)
            except BaseException:
                await process.stop()
                raise
            session = ExecSession(self._new_id(), agent_id, command, process)
            self._sessions[session.session_id] = session
            self._quota.live += 1
            if self._tg is not None:
                await self._tg.start(process.pump, name=f"session {session.session_id} output")
            return session

    def get(self, agent_id: str, session_id: int) -> ExecSession:
        """The caller's own live session `session_id`; a clear refusal for anything else."""
        session = self._sessions.get(session_id)
        if session is None or session.agent_id != agent_id:
            raise InvalidInput(
                f"session {session_id} is not running: it exited, or it belonged to an earlier"
                " process of this run (sessions end when a run stops and are never resumed)."
                " Start the command again with exec_command if you still need it."
            )
        return session

    async def release(self, session: ExecSession) -> None:
        """Forget `session` and stop whatever is left of it (its command has exited)."""
        self._forget(session)
        await session.process.stop()

    async def close_agent(self, agent_id: str) -> None:
        """Stop every session `agent_id` owns (the agent ended)."""
        await self._stop_all(self.owned_by(agent_id))

    async def aclose(self) -> None:
        """Stop every session; no session starts after this (the run stops)."""
        self._closed = True
        await self._stop_all(list(self._sessions.values()))

    async def _stop_all(self, sessions: list[ExecSession]) -> None:
        for session in sessions:
            self._forget(session)
        with anyio.move_on_after(STOP_TIMEOUT, shield=True):
            for session in sessions:
                try:
                    await session.process.stop()
                except Exception:  # one session that cannot be stopped must not keep the others
                    logger.exception("could not stop command session %s", session.session_id)

    def _forget(self, session: ExecSession) -> None:
        if self._sessions.pop(session.session_id, None) is not None:
            self._quota.live -= 1

    def _new_id(self) -> int:
        # Random, not counted from 1: an id from before a resume must not name a new session.
        while True:
            candidate = 1000 + secrets.randbelow(9_000_000)
            if candidate not in self._sessions:
                return candidate


@asynccontextmanager
async def open_exec_sessions(
    *, max_per_agent: int = MAX_SESSIONS_PER_AGENT, quota: SessionQuota = PROCESS_QUOTA
) -> AsyncIterator[ExecSessions]:
    """A run's sessions, each one's output kept as it comes; all stopped when the block exits."""
    async with anyio.create_task_group() as tg:
        sessions = ExecSessions(tg, max_per_agent=max_per_agent, quota=quota)
        try:
            yield sessions
        finally:
            await sessions.aclose()
