"""The dashboard's run list: one row per run with its counts, cost and duration, filtered.

`GET /v1/dashboard/runs?status=&kind=&q=&limit=&offset=` reads the journal (and the runs this
server accepted but has not journaled yet), newest first; `q` matches the run id, kind or status
as text. Each row is what `corral status` totals for the run, so the list and the CLI agree.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from corral.agents import RunRecord

from ..._inspect import read_status
from .._events import OPEN_STATUSES
from .._runs import RunManager

PAGE_LIMIT = 200
"""The most rows one request returns; the page asks for more with `offset`."""


class RunList:
    def __init__(self, manager: RunManager) -> None:
        self._manager = manager
        self._finished: dict[str, tuple[float, dict[str, Any]]] = {}
        """Rows of finished runs by `updated_at`: the list polls, and their totals never move."""

    async def list_runs(self, request: Request) -> Response:
        query = request.query_params
        try:
            limit = min(int(query.get("limit", "50")), PAGE_LIMIT)
            offset = max(int(query.get("offset", "0")), 0)
        except ValueError:
            return JSONResponse({"error": "limit and offset must be whole numbers"}, 422)
        rows = [row for row in await self._rows() if _matches(row, query)]
        rows.sort(key=lambda row: row["created_at"], reverse=True)
        return JSONResponse({"runs": rows[offset : offset + max(limit, 0)], "total": len(rows)})

    async def _rows(self) -> list[dict[str, Any]]:
        manager = self._manager
        rows: dict[str, dict[str, Any]] = {}
        for record in await manager.store.list_runs():
            rows[record.run_id] = await self._row(record)
        for entry in await manager.listed_entries(rows):
            status = await manager.status_of(entry)
            if entry.run_id in rows:
                rows[entry.run_id]["status"] = status
                continue
            rows[entry.run_id] = {
                "id": entry.run_id,
                "kind": entry.request.kind,
                "status": status,
                "created_at": entry.created_at,
                "duration_s": 0.0,
                "items": {},
                "agents": {},
                "tokens": 0,
                "cost_usd": 0.0,
            }
        return list(rows.values())

    async def _row(self, record: RunRecord) -> dict[str, Any]:
        kept = self._finished.get(record.run_id)
        if kept is not None and kept[0] == record.updated_at:
            return dict(kept[1])
        row = await self._read_row(record)
        if record.status not in OPEN_STATUSES:
            self._finished[record.run_id] = (record.updated_at, row)
        return dict(row)

    async def _read_row(self, record: RunRecord) -> dict[str, Any]:
        totals = (await read_status(self._manager.store, record.run_id)).totals()
        ended = record.updated_at if record.status not in OPEN_STATUSES else time.time()
        return {
            "id": record.run_id,
            "kind": record.kind,
            "status": record.status,
            "created_at": record.created_at,
            "duration_s": round(max(ended - record.created_at, 0.0), 3),
            "items": totals["items"],
            "agents": totals["agents"],
            "tokens": totals["input_tokens"] + totals["output_tokens"],
            "cost_usd": totals["cost_usd"],
        }


def _matches(row: dict[str, Any], query: Any) -> bool:
    for key in ("status", "kind"):
        wanted = query.get(key)
        if wanted and row[key] != wanted:
            return False
    text = str(query.get("q", "")).strip().lower()
    return not text or any(text in str(row[key]).lower() for key in ("id", "kind", "status"))
