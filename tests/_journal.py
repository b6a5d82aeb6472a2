"""Seeding a journal for tests that drive one agent by hand: its run and its agent record; and
a journal file as someone else might hand one over, for the hostile tests that read one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from corral.agents import AgentRecord, RunRecord, Store
from corral.agents._store import open_journal


def agent_record(agent_id: str = "a", run_id: str = "r") -> AgentRecord:
    return AgentRecord(
        agent_id=agent_id,
        run_id=run_id,
        parent_id=None,
        nickname=agent_id,
        role="general",
        status="running",
        created_at=0,
        updated_at=0,
        base_instructions="i",
        config={},
    )


async def seed_agent(store: Store, agent_id: str = "a", run_id: str = "r") -> None:
    """Journal run `run_id` (unless there) and agent `agent_id` in it."""
    if await store.get_run(run_id) is None:
        await store.create_run(
            RunRecord(
                run_id=run_id, kind="exec", status="running", created_at=0, updated_at=0, config={}
            )
        )
    await store.create_agent(agent_record(agent_id, run_id))


async def given_journal(
    path: Path, run_id: str = "run-1", *, task: str = "", agent_error: str | None = None
) -> Path:
    """A SQLite journal file holding one failed run `run_id` on `task` and, with `agent_error`,
    its agent `agent-1`, failed with that error. Every text is the caller's, escapes and all."""
    async with open_journal(path) as store:
        await store.create_run(
            RunRecord(
                run_id=run_id,
                kind="exec",
                status="failed",
                created_at=1_800_000_000.0,
                updated_at=1_800_000_000.0,
                config={"task": task},
            )
        )
        if agent_error is not None:
            await store.create_agent(agent_record("agent-1", run_id))
            await store.update_agent("agent-1", status="failed", error=agent_error)
    return path


async def planted_journal(path: Path, *statements: str, params: tuple[object, ...] = ()) -> Path:
    """An empty journal file made by corral, then changed behind its back by raw SQL (each of
    `statements` in turn; `params` go to the last one)."""
    async with open_journal(path):
        pass
    with sqlite3.connect(path) as conn:
        for number, statement in enumerate(statements, start=1):
            conn.execute(statement, params if number == len(statements) else ())
    conn.close()
    return path
