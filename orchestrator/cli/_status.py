"""`corral status RUN`, `corral runs` and `corral export RUN`: reading the journal.

They open it read-only and never write to it, so a journal on read-only media can be inspected.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

from corral.agents import UnknownRun, export_jsonl, load_config, open_sqlite_store
from corral.agents._store import SQLiteStore

from .._inspect import RunStatus, read_status, run_summary
from ..runs import journal_path


def add_parser(sub: Any) -> None:
    status = sub.add_parser("status", help="show a run's agents and items with tokens and cost")
    status.add_argument("run_id", metavar="RUN")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(handler=show_status)
    runs = sub.add_parser("runs", help="list the runs in the journal")
    runs.add_argument("--status", help="only runs with this status")
    runs.add_argument("--json", action="store_true", help="print a JSON array")
    runs.set_defaults(handler=list_runs)
    export = sub.add_parser("export", help="write a run's whole journal as JSON lines")
    export.add_argument("run_id", metavar="RUN")
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")
    export.set_defaults(handler=export_run)


def _journal() -> Path:
    return journal_path(load_config(cwd=Path.cwd()).config)


def open_journal_of(run_id: str, journal: Path) -> AbstractAsyncContextManager[SQLiteStore]:
    """The journal, opened read-only to read run `run_id`; with no journal, no such run."""
    if not journal.exists():
        raise UnknownRun(run_id, str(journal))
    return open_sqlite_store(journal, read_only=True)


async def show_status(args: argparse.Namespace) -> int:
    async with open_journal_of(args.run_id, _journal()) as store:
        status = await read_status(store, args.run_id)
    if args.json:
        print(json.dumps(status.to_json(), ensure_ascii=False))
    else:
        print(format_status(status))
    return 0


async def list_runs(args: argparse.Namespace) -> int:
    journal = _journal()
    if not journal.exists():  # nothing has run here yet; reading must not create the file
        runs = []
    else:
        async with open_sqlite_store(journal, read_only=True) as store:
            runs = await store.list_runs(status=args.status)
    if args.json:
        print(json.dumps([run_summary(r) for r in runs]))
        return 0
    if not runs:
        print("no runs yet")
    for run in runs:
        print(f"{run.run_id}  {run.kind:<8} {run.status:<16} {_when(run.created_at)}")
    return 0


async def export_run(args: argparse.Namespace) -> int:
    async with open_journal_of(args.run_id, _journal()) as store:
        if args.out is None:
            await export_jsonl(store, args.run_id, sys.stdout)
            return 0
        with args.out.open("w", encoding="utf-8") as out:
            lines = await export_jsonl(store, args.run_id, out)
    print(f"corral export: wrote {lines} lines to {args.out}", file=sys.stderr)
    return 0


def format_status(status: RunStatus) -> str:
    run, totals = status.run, status.totals()
    lines = [
        f"run {run.run_id} ({run.kind}): {run.status}, started {_when(run.created_at)}",
        f"tokens: {totals['input_tokens']} in ({totals['cached_input_tokens']} cached), "
        f"{totals['output_tokens']} out; cost ${totals['cost_usd']:.4f}",
    ]
    lines.extend(_lease_lines(status))
    if status.agents:
        lines.append("agents:")
        depth = {a.agent_id: a.depth for a in status.agents}
        for agent in status.agents:
            indent = "  " * (depth[agent.agent_id] + 1)
            tokens = agent.usage.get("input_tokens", 0) + agent.usage.get("output_tokens", 0)
            refused = status.network_denials.get(agent.agent_id, 0)
            lines.append(
                f"{indent}{agent.nickname} ({agent.agent_id}) {agent.role}: {agent.status}, "
                f"{tokens} tokens, ${agent.cost_usd:.4f}"
                + (f", network denials: {refused}" if refused else "")
                + (f" - {agent.error}" if agent.error else "")
            )
    if status.items:
        counts = ", ".join(f"{n} {s}" for s, n in sorted(totals["items"].items()))
        lines.append(f"items: {len(status.items)} ({counts})")
        for item in status.items:
            detail = item.error or ""
            lines.append(f"  #{item.index} {item.status} {item.agent_id or ''} {detail}".rstrip())
    return "\n".join(lines)


def _lease_lines(status: RunStatus) -> list[str]:
    lines = [
        f"taken over at {_when(lease.since)} by pid {lease.pid} on {lease.host} from "
        f"{lease.taken_from}"
        for lease in status.takeovers
    ]
    holder = status.holder
    if holder is not None:
        lines.append(f"carried on by {holder.describe()}")
    return lines


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")
