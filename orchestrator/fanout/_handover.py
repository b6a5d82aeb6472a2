"""Reading back the items of a fan-out's worker process that was lost, so they are dealt again.

Only what the journal says counts: an item a lost process journaled as final is final (done, or
failed by the agent that process ran for it); any other is carried on by its latest journaled
agent, restored by replay as `corral resume` restores it (its ledger decides which tool calls
already ran), or started afresh if no agent of it was journaled. This process's pool learns
each item's agent, so it can restore it here too.
"""

from __future__ import annotations

from collections.abc import Collection

from corral.agents import AgentRecord, Store

from .._procs import ReadBack
from ._outcome import DONE, FAILED, PENDING
from ._pool import item_owners


class JournalReadBack:
    """`ProcessRun.read_back` of a fan-out run `run_id` in `store`; `owners` is this process's
    pool's map of each item's agent, kept up to date; `dropped` are agents `--retry-failed` set
    aside, whose failure is not the item's outcome any more."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        owners: dict[int, AgentRecord],
        dropped: Collection[str] = (),
    ) -> None:
        self._store = store
        self._run_id = run_id
        self._owners = owners
        self._dropped = frozenset(dropped)

    async def __call__(self, indexes: list[int]) -> list[ReadBack]:
        records = {record.index: record for record in await self._store.items(self._run_id)}
        owners = item_owners(await self._store.list_agents(self._run_id))
        found: list[ReadBack] = []
        for index in indexes:
            record, owner = records[index], owners.get(index)
            if owner is not None and owner.agent_id in self._dropped:
                # Set aside by --retry-failed: a fresh agent runs the item, as `retry_records`.
                owner = None
                record = record.model_copy(
                    update={"status": PENDING, "agent_id": None, "error": None}
                )
            if owner is None:
                self._owners.pop(index, None)
            else:
                self._owners[index] = owner
            final = record.status == DONE or (
                record.status == FAILED and record.agent_id not in self._dropped
            )
            found.append(ReadBack(record, owner.agent_id if owner else None, final))
        return found
