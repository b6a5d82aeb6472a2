"""Seeding a journal for tests that drive one agent by hand: its run and its agent record."""

from __future__ import annotations

from corral.agents import AgentRecord, RunRecord, Store


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
