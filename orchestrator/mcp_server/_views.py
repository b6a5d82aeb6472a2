"""What the MCP tools and resources show of a run: its state, a page of results, its report.

Read from the journal (`read_status`) and, for runs this server still holds (queued, or stopped
by it), from the run manager, as `corral serve`'s handlers do; shaped as JSON for the client.
A run is named by the URIs `corral://runs/{id}` (state), `…/results` and `…/report`.
"""

from __future__ import annotations

from typing import Any, Final

from corral.agents import Store

from .._inspect import read_status
from ..service import REPORT_KEY, RunManager
from ._errors import ToolInputRefused

SCHEME: Final = "corral://runs/"
OPEN_ITEM_STATUSES: Final = frozenset({"pending", "running"})
OPEN_RUNS: Final = frozenset({"queued", "running"})


def run_uri(run_id: str, part: str = "") -> str:
    return f"{SCHEME}{run_id}" + (f"/{part}" if part else "")


def links(run_id: str) -> dict[str, str]:
    return {"state": run_uri(run_id), **{p: run_uri(run_id, p) for p in ("results", "report")}}


class RunViews:
    """Reads runs for the client: every method raises `ToolInputRefused` for an unknown run."""

    def __init__(self, manager: RunManager) -> None:
        self.manager = manager
        self.store: Store = manager.store

    async def state(self, run_id: str) -> dict[str, Any]:
        """The run's status, kind, item counts, tokens and cost, and where to read more."""
        entry = self.manager.get(run_id)
        record = await self.store.get_run(run_id)
        if record is None and entry is None:
            raise ToolInputRefused(f"no run {run_id}; corral_runs lists the runs there are")
        status = await self.manager.status(run_id) or "unknown"
        kind = record.kind if record is not None else entry.request.kind if entry else "unknown"
        shown: dict[str, Any] = {"run_id": run_id, "kind": kind, "status": status}
        if entry is not None and entry.error is not None:
            shown["error"] = entry.error
        if record is not None:
            status_now = await read_status(self.store, run_id)
            totals = status_now.totals()
            roots = [agent for agent in status_now.agents if agent.parent_id is None]
            if record.kind == "exec" and roots:  # one agent: its answer is the run's result
                shown["answer"] = roots[0].final_message
            shown["items"] = totals["items"]
            shown["agents"] = totals["agents"]
            shown["tokens"] = {k: v for k, v in totals.items() if k.endswith("_tokens")}
            shown["cost_usd"] = totals["cost_usd"]
            shown["has_report"] = REPORT_KEY in record.summary
        shown["finished"] = entry.finished if entry is not None else status not in OPEN_RUNS
        shown["links"] = links(run_id)
        return shown

    async def results(self, run_id: str, offset: int, limit: int) -> dict[str, Any]:
        """One page of the run's item results, by index, with the offset of the next page."""
        await self._known(run_id)
        items = await self.store.items(run_id) if await self.store.get_run(run_id) else []
        page = items[offset : offset + limit]
        keys = ("index", "status", "result", "error")
        following = offset + len(page)
        return {
            "run_id": run_id,
            "total": len(items),
            "offset": offset,
            "results": [{k: getattr(item, k) for k in keys} for item in page],
            "next_offset": following if following < len(items) else None,
        }

    async def report(self, run_id: str) -> dict[str, Any]:
        """The report a pipeline run (review, triage) keeps in the journal once it is done."""
        await self._known(run_id)
        record = await self.store.get_run(run_id)
        if record is None or REPORT_KEY not in record.summary:
            raise ToolInputRefused(
                f"run {run_id} has no report (yet); review and triage runs keep one when done"
            )
        return {"run_id": run_id, "report": record.summary[REPORT_KEY]}

    async def runs(self, status: str | None, limit: int) -> dict[str, Any]:
        """The newest runs of the journal and of this server, newest first."""
        shown: dict[str, dict[str, Any]] = {}
        for record in await self.store.list_runs():
            shown[record.run_id] = {
                "run_id": record.run_id,
                "kind": record.kind,
                "status": await self.manager.status(record.run_id) or record.status,
                "created_at": record.created_at,
            }
        for entry in await self.manager.listed_entries(shown):
            if entry.run_id not in shown:
                shown[entry.run_id] = {
                    "run_id": entry.run_id,
                    "kind": entry.request.kind,
                    "status": await self.manager.status_of(entry),
                    "created_at": entry.created_at,
                }
        runs = sorted(shown.values(), key=lambda run: run["created_at"], reverse=True)
        runs = [run for run in runs if status is None or run["status"] == status]
        return {"runs": [{**run, "links": links(run["run_id"])} for run in runs[:limit]]}

    async def progress(self, run_id: str) -> tuple[int, int | None]:
        """Items finished and items in all (None while the run has journaled none)."""
        if await self.store.get_run(run_id) is None:
            return 0, None
        items = await self.store.items(run_id)
        done = sum(1 for item in items if item.status not in OPEN_ITEM_STATUSES)
        return done, len(items) or None

    async def _known(self, run_id: str) -> None:
        if self.manager.get(run_id) is None and await self.store.get_run(run_id) is None:
            raise ToolInputRefused(f"no run {run_id}; corral_runs lists the runs there are")
