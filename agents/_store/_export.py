"""Export one run from any `Store` as JSON Lines, one record per line tagged with `"type"`.

The order is the run, then each agent followed by its events in `seq` order, then the batch
items, then the ledger of every agent, then the run's leases (which process carried it on, and
any takeover). Lines are plain JSON (ASCII, no NaN), so any tool reads them.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

import anyio.to_thread

from ._errors import UnknownRun
from ._protocol import Store
from ._records import _Record


async def export_jsonl(store: Store, run_id: str, out: TextIO) -> int:
    """Write run `run_id` to `out` and return how many lines were written."""
    run = await store.get_run(run_id)
    if run is None:
        raise UnknownRun(run_id, store.journal)
    written = await _write(out, [_line("run", run)])
    agents = await store.list_agents(run_id)
    for agent in agents:
        events = await store.events(agent.agent_id)
        written += await _write(out, [_line("agent", agent)] + [_line("event", e) for e in events])
    items = await store.items(run_id)
    written += await _write(out, [_line("item", item) for item in items])
    for agent in agents:
        ledger = await store.ledger(agent.agent_id)
        written += await _write(out, [_line("ledger", entry) for entry in ledger])
    leases = await store.leases(run_id)
    written += await _write(out, [_line("lease", lease) for lease in leases])
    return written


def _line(kind: str, record: _Record) -> str:
    fields: dict[str, Any] = {"type": kind, **record.model_dump(mode="json")}
    return json.dumps(fields, allow_nan=False) + "\n"


async def _write(out: TextIO, lines: list[str]) -> int:
    # `out` may be a file on a slow disk; keep the event loop free while it writes.
    await anyio.to_thread.run_sync(out.writelines, lines)
    return len(lines)
