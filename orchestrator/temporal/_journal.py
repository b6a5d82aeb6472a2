"""Journal writes from activities, idempotent under Temporal's retries.

An agent's events carry the sequence number the workflow counted for them, so an activity that
runs again after a crash writes only the events the journal does not have yet. The run and item
records are written the same way: created when missing, never twice.
"""

from __future__ import annotations

import time
from typing import Any

from temporalio.exceptions import ApplicationError

from corral.agents import AgentSpec, AgentStatus, ItemRecord, RunRecord, Store
from corral.agents._store import SeqConflict

from ._wire import FanoutRunInput, JournalBatch

JOURNAL_DIVERGED = "JournalDiverged"
PENDING = str(AgentStatus.PENDING)


async def write_batch(store: Store, batch: JournalBatch) -> int:
    """Append the batch's events the journal lacks, in one transaction; answer the seq after
    the last one. A journal that holds other events at those seqs fails the activity for good."""
    if not batch.events:
        return batch.first_seq
    now = time.time()
    numbered = [(str(payload["kind"]), payload, now) for payload in batch.events]
    try:
        await store.append_events_at(batch.agent_id, batch.first_seq, numbered)
    except SeqConflict as exc:
        raise ApplicationError(
            f"agent {batch.agent_id}'s journal does not match the events the workflow "
            f"counted from seq {batch.first_seq}: {exc}",
            type=JOURNAL_DIVERGED,
            non_retryable=True,
        ) from exc
    return batch.first_seq + len(batch.events)


async def written_from(store: Store, agent_id: str, seq: int) -> tuple[dict[str, Any], ...]:
    """What the journal holds of the agent from `seq` on. Past the batch an activity carried,
    only an earlier attempt of that same activity writes (the workflow waits for it before
    the next): its output, committed when its result was lost (a worker died, a timeout)."""
    return tuple(event.payload for event in await store.events(agent_id, after_seq=seq - 1))


async def begin_run(store: Store, run: FanoutRunInput) -> list[int]:
    """Journal the run and its items unless already there; answer the unfinished items."""
    if await store.get_run(run.run_id) is None:
        now = time.time()
        await store.create_run(
            RunRecord(
                run_id=run.run_id,
                kind=run.kind,
                status="running",
                created_at=now,
                updated_at=now,
                config=run.settings,
            )
        )
    records = await store.items(run.run_id)
    if not records:
        records = [
            ItemRecord(run_id=run.run_id, index=index, input=data)
            for index, data in enumerate(run.items)
        ]
        await store.put_items(run.run_id, records)
    return [r.index for r in records if r.status not in ("done", "failed")]


async def journal_agent(store: Store, spec: AgentSpec, task: str, *, queued: bool = False) -> None:
    """The agent's record, as the local runtime writes it, unless a retry already did: a
    `queued` worker's `pending`, and `running` once it starts."""
    record = await store.get_agent(spec.agent_id)
    now = time.time()
    if record is None:
        fresh = spec.journal_record(task, now=now)
        await store.create_agent(fresh.model_copy(update={"status": PENDING}) if queued else fresh)
    elif record.status == PENDING and not queued:  # a queued worker starts now
        await store.update_agent(spec.agent_id, status=str(AgentStatus.RUNNING), updated_at=now)


def usage_counts(usage: dict[str, Any]) -> dict[str, int]:
    """The token counts an item record shows, from a `Usage` dump."""
    return {
        "input_tokens": int(usage.get("input_tokens", 0)),
        "output_tokens": int(usage.get("output_tokens", 0)),
        "cached_tokens": int(usage.get("cached_input_tokens", 0)),
    }
