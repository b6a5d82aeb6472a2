"""Deleting a run from the journal: what every store checks first, and what it answers.

A run is deleted whole (its agents, events, items, ledger and leases) in one transaction, or not
at all. Every store decides with `check_deletable` inside that transaction, so they agree: a run
that may still be carried on (an open status, or a live lease whose holder is not gone) is
refused unless forced, and so is a run whose agents another run's records point at (its
journal would be left pointing at nothing). Blobs and memories are not the journal's: the
caller deletes those (`corral journal delete` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from corral.tools import InvalidInput

from ._errors import StoreError
from ._lease import LeaseRecord, holder_gone
from ._records import RunRecord, _Record

OPEN_STATUSES: Final = frozenset({"queued", "pending", "running"})
"""Statuses of a run that may still be carried on somewhere (a crashed one keeps `running`)."""


class DeletedRun(_Record):
    """What deleting a run removed, counted per table."""

    run_id: str
    agents: int = 0
    events: int = 0
    items: int = 0
    ledger: int = 0
    leases: int = 0


class RunActive(StoreError, InvalidInput):
    """The run may still be carried on, or other runs point at it; nothing was deleted."""


def check_deletable(
    run: RunRecord, live: LeaseRecord | None, now: float, *, force: bool, journal: str
) -> None:
    """Refuse to delete `run` while it may still run (`live` is its unreleased lease, if any)."""
    if force:
        return
    if live is not None and holder_gone(live, now) is None:
        raise RunActive(
            f"run {run.run_id} is being carried on by {live.describe()}; nothing was deleted. "
            "Wait for it to end or stop that process, or pass --force to delete it anyway"
        )
    if run.status in OPEN_STATUSES:
        raise RunActive(
            f"run {run.run_id} in {journal} is {run.status} (no live process holds it here: it "
            "may have crashed, or run on another executor); nothing was deleted. `corral resume` "
            "finishes a crashed run; pass --force to delete it anyway"
        )


def check_unreferenced(run_id: str, others: Sequence[str], journal: str) -> None:
    """Refuse to delete a run whose agents `others` (other runs) name as parents or item agents."""
    if others:
        names = ", ".join(sorted(set(others)))
        raise RunActive(
            f"run(s) {names} in {journal} point at agents of run {run_id}; nothing was deleted. "
            "Delete those runs first"
        )


_RUN_AGENTS: Final = "SELECT agent_id FROM agents WHERE run_id = ?"
REFERRERS: Final = f"""
SELECT run_id FROM agents WHERE parent_id IN ({_RUN_AGENTS}) AND run_id <> ?
UNION SELECT run_id FROM items WHERE agent_id IN ({_RUN_AGENTS}) AND run_id <> ?
"""
"""Other runs whose agents or items name an agent of the run (`?` is the run id, four times)."""
DELETES: Final = (
    ("ledger", f"DELETE FROM ledger WHERE agent_id IN ({_RUN_AGENTS})"),
    ("events", "DELETE FROM events WHERE run_id = ?"),
    ("items", "DELETE FROM items WHERE run_id = ?"),
    ("agents", "DELETE FROM agents WHERE run_id = ?"),
    ("leases", "DELETE FROM leases WHERE run_id = ?"),
    ("runs", "DELETE FROM runs WHERE run_id = ?"),
)
"""The statements that delete a run, children first (`?` is the run id); SQL both stores take
(PostgreSQL with `%s`)."""


def deleted(run_id: str, counts: dict[str, int]) -> DeletedRun:
    """The answer for the row counts of `DELETES`."""
    return DeletedRun(run_id=run_id, **{k: v for k, v in counts.items() if k != "runs"})
