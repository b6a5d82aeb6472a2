"""The run's interactive command sessions: opened with the runtime, stopped with its agents.

Every agent of a run shares one `ExecSessions` (the per-agent cap is its own, the 64-session cap
the process's); each session's output is kept by a task of it; an agent's sessions stop
when its loop ends, and whatever is left stops when the run does (finished, stopped, cancelled).
A caller that brought its own `ExecSessions` keeps it, and stops it itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

from corral.tools import ToolServices, open_exec_sessions


@asynccontextmanager
async def open_sessions(services: ToolServices) -> AsyncIterator[ToolServices]:
    """`services` with the run's sessions; every session is stopped when the block exits."""
    if services.exec_sessions is not None:
        yield services
        return
    async with open_exec_sessions() as sessions:
        yield replace(services, exec_sessions=sessions)


async def stop_sessions(services: ToolServices, agent_id: str) -> None:
    """Stop the sessions `agent_id` owns (its loop ended; the run goes on)."""
    if services.exec_sessions is not None:
        await services.exec_sessions.close_agent(agent_id)
