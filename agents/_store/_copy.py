"""Copy runs from one journal to another, keeping their ids and sequence numbers.

For a user who outgrows the embedded SQLite journal: `corral journal copy` moves their history
into PostgreSQL. A run is created at the destination with the status `copying` and gets its real
record back only when everything else (agents, events in `run_seq` order, items, the ledger,
leases) is there, so a copy that stopped half-way is recognised and finished by the next one;
a run the destination already holds whole is skipped, and one that differs is never overwritten,
nor is another run's history: a run whose agent ids another run holds there is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ._errors import DuplicateRecord, JournalUnreadable, SeqConflict, UnknownRun
from ._lease import LeaseRecord
from ._protocol import Store
from ._records import AgentRecord, JournalEvent, LedgerEntry, NumberedEvent, RunRecord

COPYING = "copying"
"""The status of a run at the destination while its copy is under way."""


class RunExists(DuplicateRecord):
    """The destination holds another run under the same id; it is never overwritten."""


@dataclass
class CopyReport:
    """What a copy did, run by run."""

    copied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Runs the destination already held whole (a copy made before)."""
    events: int = 0


async def copy_runs(
    source: Store, dest: Store, *, run_ids: Sequence[str] | None = None
) -> CopyReport:
    """Copy `run_ids` (default: every run, oldest first) from `source` into `dest`."""
    report = CopyReport()
    try:
        await _copy_all(source, dest, run_ids, report)
    except (ValueError, TypeError, OverflowError) as exc:  # a row the source cannot give back
        raise await _unreadable(source, dest, report, exc) from exc
    return report


async def _unreadable(
    source: Store, dest: Store, report: CopyReport, exc: Exception
) -> JournalUnreadable:
    reason = " ".join(str(exc).split())[:200]
    kept = f"the {len(report.copied)} run(s) before it were copied" if report.copied else ""
    half = [r.run_id for r in await dest.list_runs() if r.status == COPYING]
    stopped = (
        f"; {', '.join(half)} stopped half-way at {dest.journal} (`corral journal delete "
        "--force RUN` removes it)"
        if half
        else ""
    )
    return JournalUnreadable(
        f"{source.journal} holds a row corral cannot read ({reason}), so it is not a journal "
        f"corral wrote; {kept or 'nothing was copied'}{stopped}"
    )


async def _copy_all(
    source: Store, dest: Store, run_ids: Sequence[str] | None, report: CopyReport
) -> None:
    runs = await _runs(source, run_ids)
    await _refuse_clashes(source, dest, runs)  # before any write, so a refusal changes nothing
    for run in runs:
        held = await dest.get_run(run.run_id)
        if held is not None and held.status != COPYING:
            report.skipped.append(run.run_id)
            continue
        report.events += await _copy_run(source, dest, run, started=held is not None)
        report.copied.append(run.run_id)


async def _runs(source: Store, run_ids: Sequence[str] | None) -> list[RunRecord]:
    if run_ids is None:
        return await source.list_runs()
    runs: list[RunRecord] = []
    for run_id in run_ids:
        run = await source.get_run(run_id)
        if run is None:
            raise UnknownRun(run_id, source.journal)
        runs.append(run)
    return runs


async def _refuse_clashes(source: Store, dest: Store, runs: Sequence[RunRecord]) -> None:
    for run in runs:
        await _refuse_foreign_agents(source, dest, run)
        held = await dest.get_run(run.run_id)
        if held is None or held == run:
            continue
        if held.status == COPYING and (held.kind, held.created_at) == (run.kind, run.created_at):
            continue  # a copy of this very run that stopped half-way: finished below
        raise RunExists(
            f"run {run.run_id!r} already exists in {dest.journal} and is not this copy of it; "
            "nothing was copied. Copy into another journal, or leave that run out with --run"
        )


async def _refuse_foreign_agents(source: Store, dest: Store, run: RunRecord) -> None:
    """Events and ledger entries are copied by agent id: an agent id that another run holds at
    the destination would take them into that run's history (a resume would replay them)."""
    for agent in await source.list_agents(run.run_id):
        held = await dest.get_agent(agent.agent_id)
        if held is not None and held.run_id != run.run_id:
            raise RunExists(
                f"run {run.run_id!r} has an agent {agent.agent_id!r} that run {held.run_id!r} "
                f"already holds in {dest.journal}; nothing was copied. Copy into another "
                "journal, or leave that run out with --run"
            )


async def _copy_run(source: Store, dest: Store, run: RunRecord, *, started: bool) -> int:
    if not started:
        await dest.create_run(run.model_copy(update={"status": COPYING}))
    await _copy_agents(dest, await source.list_agents(run.run_id))
    events = await _copy_events(source, dest, run.run_id)
    have = {item.index for item in await dest.items(run.run_id)}
    await dest.put_items(
        run.run_id, [i for i in await source.items(run.run_id) if i.index not in have]
    )
    for agent in await source.list_agents(run.run_id):
        await _copy_ledger(dest, await source.ledger(agent.agent_id))
    await _copy_leases(dest, await source.leases(run.run_id), await dest.leases(run.run_id))
    await dest.update_run(
        run.run_id,
        status=run.status,
        updated_at=run.updated_at,
        config=run.config,
        summary=run.summary,
    )
    return events


async def _copy_agents(dest: Store, agents: Sequence[AgentRecord]) -> None:
    # Parents before children, whatever order their clocks gave them.
    pending = list(agents)
    placed = {a.agent_id for a in agents if await dest.get_agent(a.agent_id) is not None}
    while pending:
        ready = [a for a in pending if a.parent_id is None or a.parent_id in placed]
        if not ready:
            ready = pending  # a parent outside the run: let the store say what is wrong
        for agent in ready:
            if agent.agent_id not in placed:
                await dest.create_agent(agent)
                placed.add(agent.agent_id)
        pending = [a for a in pending if a not in ready]


async def _copy_events(source: Store, dest: Store, run_id: str) -> int:
    """Append the run's events in `run_seq` order, each at its own `seq`; answers how many."""
    events = await source.run_events(run_id)
    copied = 0
    for batch in _by_agent(events):
        first = batch[0]
        numbered: list[NumberedEvent] = [(e.kind, e.payload, e.at) for e in batch]
        added = await dest.append_events_at(first.agent_id, first.seq, numbered)
        for want, got in zip(batch[len(batch) - len(added) :], added, strict=True):
            if got.run_seq != want.run_seq:
                raise SeqConflict(
                    f"run {run_id!r}: event {want.agent_id}#{want.seq} got run_seq {got.run_seq} "
                    f"at {dest.journal}, not {want.run_seq}; the destination's run was changed "
                    "during the copy"
                )
        copied += len(added)
    return copied


def _by_agent(events: Sequence[JournalEvent]) -> list[list[JournalEvent]]:
    """Consecutive events of one agent, in journal order, as batches."""
    batches: list[list[JournalEvent]] = []
    for event in events:
        if batches and batches[-1][-1].agent_id == event.agent_id:
            batches[-1].append(event)
        else:
            batches.append([event])
    return batches


async def _copy_ledger(dest: Store, entries: Sequence[LedgerEntry]) -> None:
    if not entries:
        return
    have = {e.call_id: e for e in await dest.ledger(entries[0].agent_id)}
    for entry in entries:
        held = have.get(entry.call_id)
        if held is None:
            started = entry.model_copy(
                update={"state": "started", "output": None, "success": None, "finished_at": None}
            )
            await dest.ledger_start(started)
        if entry.state == "finished" and (held is None or held.state != "finished"):
            assert entry.output is not None and entry.success is not None
            await dest.ledger_finish(
                entry.agent_id,
                entry.call_id,
                output=entry.output,
                success=entry.success,
                at=entry.finished_at or entry.started_at,
            )


async def _copy_leases(
    dest: Store, leases: Sequence[LeaseRecord], held: Sequence[LeaseRecord]
) -> None:
    have = {lease.holder for lease in held}
    for lease in leases:
        if lease.holder in have:
            continue
        await dest.take_lease(lease.model_copy(update={"released_at": None}))
        if lease.released_at is not None:
            await dest.release_lease(lease.run_id, lease.holder, at=lease.released_at)
