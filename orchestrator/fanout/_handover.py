"""Reading back the items of a fan-out's worker process that was lost, so they are dealt again.

Only what the journal says counts: an item a lost process journaled as final is final (done, or
failed by the agent that process ran for it); any other is carried on by its latest journaled
agent, restored by replay as `corral resume` restores it (its ledger decides which tool calls
already ran), or started afresh if no agent of it was journaled. The pool of this process learns
each item's agent, so it can restore it here too.
"""

from __future__ import annotations

from collections.abc import Collection

from .._procs import ReadBack
from ._outcome import DONE, FAILED
from ._pool import WorkerPool, item_owners


class JournalReadBack:
    """`ProcessRun.read_back` of a fan-out: `dropped` are agents `--retry-failed` set aside, whose
    failure is not the item's outcome any more."""

    def __init__(self, pool: WorkerPool, dropped: Collection[str] = ()) -> None:
        self._pool = pool
        self._dropped = frozenset(dropped)

    async def __call__(self, indexes: list[int]) -> list[ReadBack]:
        store, run_id = self._pool.store, self._pool.runtime.run_id
        records = {record.index: record for record in await store.items(run_id)}
        owners = item_owners(await store.list_agents(run_id))
        found: list[ReadBack] = []
        for index in indexes:
            record, owner = records[index], owners.get(index)
            if owner is None:
                self._pool.owners.pop(index, None)
            else:
                self._pool.owners[index] = owner
            final = record.status == DONE or (
                record.status == FAILED and record.agent_id not in self._dropped
            )
            found.append(ReadBack(record, owner.agent_id if owner else None, final))
        return found
