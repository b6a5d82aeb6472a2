"""What the journal says of a lost worker process's items decides what is dealt again.

The read-back runs against the in-memory journal: an item journaled done is final; one failed
by the agent that ran for it is final; one whose failure `--retry-failed` set aside is not; any
other is carried on by its latest agent, or afresh if none was journaled.
"""

from __future__ import annotations

import anyio
import pytest

from corral.agents import AgentRecord, ItemRecord, MemoryStore, RunRecord
from corral.orchestrator.fanout._handover import JournalReadBack

pytestmark = pytest.mark.anyio
RUN = "run-h"
DEADLINE = 5


def agent(agent_id: str, index: int, created: float) -> AgentRecord:
    return AgentRecord(
        agent_id=agent_id,
        run_id=RUN,
        parent_id=None,
        nickname=f"item {index}",
        role="worker",
        status="running",
        created_at=created,
        updated_at=created,
        base_instructions="",
        config={},
    )


async def journal() -> MemoryStore:
    store = MemoryStore()
    await store.create_run(
        RunRecord(
            run_id=RUN, kind="fanout", status="running", created_at=0, updated_at=0, config={}
        )
    )
    items = [
        ItemRecord(run_id=RUN, index=0, input={}, status="done", agent_id="a0"),
        ItemRecord(run_id=RUN, index=1, input={}, status="failed", agent_id="a1"),
        ItemRecord(run_id=RUN, index=2, input={}, status="failed", agent_id="old2"),
        ItemRecord(run_id=RUN, index=3, input={}, status="running", agent_id="a3"),
        ItemRecord(run_id=RUN, index=4, input={}, status="pending"),
        ItemRecord(run_id=RUN, index=5, input={}, status="failed", agent_id="old5"),
    ]
    await store.put_items(RUN, items)
    for record in (
        agent("a0", 0, 1),
        agent("a1", 1, 1),
        agent("old2", 2, 1),
        agent("a3", 3, 1),
        agent("old5", 5, 1),
        agent("new5", 5, 2),  # the retry's fresh agent, journaled before the process was lost
    ):
        await store.create_agent(record)
    return store


async def test_the_journal_decides_which_of_a_lost_process_items_run_again() -> None:
    store = await journal()
    owners: dict[int, AgentRecord] = {}
    read_back = JournalReadBack(store, RUN, owners, dropped=["old2", "old5"])
    with anyio.fail_after(DEADLINE):
        found = await read_back([0, 1, 2, 3, 4, 5])
    assert [(item.record.index, item.owner, item.final) for item in found] == [
        (0, "a0", True),  # done: counted, not run again
        (1, "a1", True),  # failed by its own agent
        (2, None, False),  # its failure was set aside by --retry-failed: runs afresh
        (3, "a3", False),  # carried on by replay of its agent
        (4, None, False),  # no agent journaled: starts afresh
        (5, "new5", False),  # the retry's agent is the one carried on
    ]
    assert {index: record.agent_id for index, record in owners.items()} == {
        0: "a0",
        1: "a1",
        3: "a3",
        5: "new5",
    }
