"""`corral status RUN`, `corral runs` and `corral export RUN`: reading the journal.

They open it read-only and never write to it, so a journal on read-only media can be inspected.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._json_out import json_text

if TYPE_CHECKING:
    from corral.agents import RunRecord
    from corral.agents._store import Store, Target

    from .._inspect import RunStatus


def add_parser(sub: Any) -> None:
    status = sub.add_parser("status", help="show a run's agents and items with tokens and cost")
    status.add_argument("run_id", metavar="RUN")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(handler=show_status)
    runs = sub.add_parser("runs", help="list the runs in the journal, newest first")
    runs.add_argument("--status", help="only runs with this status")
    runs.add_argument(
        "--limit", type=_limit, default=20, help="show at most this many (default 20; 0: all)"
    )
    runs.add_argument("--json", action="store_true", help="print a JSON array")
    runs.set_defaults(handler=list_runs)
    export = sub.add_parser("export", help="write a run's whole journal as JSON lines")
    export.add_argument("run_id", metavar="RUN")
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")
    export.set_defaults(handler=export_run)


def _journal() -> Target:
    from corral.agents import journal_target, load_config

    return journal_target(load_config(cwd=Path.cwd()).config)


def open_journal_of(run_id: str, journal: Target) -> AbstractAsyncContextManager[Store]:
    """The journal, opened read-only to read run `run_id`; with no journal, no such run."""
    from corral.agents import UnknownRun, open_journal

    if isinstance(journal, Path) and not journal.exists():
        raise UnknownRun(run_id, str(journal))
    return open_journal(journal, read_only=True)


async def refuse_an_agent_id(store: Store, run_id: str) -> None:
    """An agent's id given where a run's is wanted (`corral status agent-...`, as `resume`
    takes): say whose run it is, rather than that no such run exists."""
    from corral.tools import InvalidInput

    if await store.get_run(run_id) is not None:
        return
    agent = await store.get_agent(run_id)
    if agent is not None:
        raise InvalidInput(
            f"{run_id} is an agent of run {agent.run_id}, not a run; give the run's id: "
            f"{agent.run_id}"
        )


async def show_status(args: argparse.Namespace) -> int:
    from .._inspect import read_status

    async with open_journal_of(args.run_id, _journal()) as store:
        await refuse_an_agent_id(store, args.run_id)
        status = await read_status(store, args.run_id)
    if args.json:
        print(json_text(status.to_json()))
    else:
        print(_spelled(format_status(status)))
    return 0


async def list_runs(args: argparse.Namespace) -> int:
    from corral.agents import open_journal

    from .._inspect import run_summary

    journal = _journal()
    if isinstance(journal, Path) and not journal.exists():
        runs = []  # nothing has run here yet; reading must not create the file
    else:
        async with open_journal(journal, read_only=True) as store:
            runs = await store.list_runs()
    every = runs
    if args.status is not None:  # in the words `corral runs` shows: `completed` finds `done` too
        runs = [r for r in runs if status_word(r.status) == status_word(args.status)]
    runs = runs[::-1][: args.limit or None]  # the journal lists oldest first
    if args.json:
        listed = [
            {**run_summary(r), "status": status_word(r.status), "title": run_title(r)} for r in runs
        ]
        print(json.dumps(listed))
        return 0
    if not runs:
        print(_none_listed(args.status, every))
    for run in runs:
        status = status_word(run.status)
        when = _when(run.created_at)
        line = f"{run.run_id}  {run.kind:<8} {status:<12} {when}  {run_title(run)}".rstrip()
        print(_spelled(line))
    return 0


def _none_listed(wanted: str | None, every: list[RunRecord]) -> str:
    """Why `corral runs` lists nothing: no runs at all, or none with a (perhaps misspelt) status."""
    if wanted is None or not every:
        return "no runs yet"
    words = ", ".join(sorted({status_word(r.status) for r in every}))
    return _spelled(f"no runs with status {wanted!r}; the runs here are: {words}")


# The journal says `done` for a finished fan-out and `completed` for a finished agent; a person
# reading `corral runs` sees one word for both.
_STATUS_WORDS = {"done": "completed"}
_TITLE_KEYS = ("title", "task", "template", "instruction", "issue")
_TITLE_WIDTH = 60


def status_word(status: str) -> str:
    """The status as `corral runs` and `corral status` say it."""
    return _STATUS_WORDS.get(status, status)


def _spelled(text: str) -> str:
    """Errors and titles are model, tool or copied-journal text: what a terminal would act on
    is spelled out."""
    from ._approval import shown_lines

    return shown_lines(text)


def run_title(run: Any) -> str:
    """A run's title: the first line of its task (or fan-out template), shortened."""
    config = run.config if isinstance(run.config, dict) else {}
    text = next((config[k] for k in _TITLE_KEYS if isinstance(config.get(k), str)), "")
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= _TITLE_WIDTH else first[: _TITLE_WIDTH - 1] + "\u2026"


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("give 0 (all runs) or a positive number")
    return value


async def export_run(args: argparse.Namespace) -> int:
    from corral.agents import export_jsonl
    from corral.tools import OperationFailed

    from ._out import check_out_file

    if args.out is not None:
        check_out_file(args.out, example="run.jsonl")
    async with open_journal_of(args.run_id, _journal()) as store:
        await refuse_an_agent_id(store, args.run_id)
        if args.out is None:
            await export_jsonl(store, args.run_id, sys.stdout)
            return 0
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            with args.out.open("w", encoding="utf-8") as out:
                lines = await export_jsonl(store, args.run_id, out)
        except OSError as exc:
            raise OperationFailed(f"cannot write {args.out}: {exc.strerror or exc}") from exc
    print(f"corral export: wrote {lines} lines to {args.out}", file=sys.stderr)
    return 0


def format_status(status: RunStatus) -> str:
    from corral.agents import format_cost

    run, totals = status.run, status.totals()
    lines = [
        f"run {run.run_id} ({run.kind}): {status_word(run.status)}, "
        f"started {_when(run.created_at)}",
        f"tokens: {totals['input_tokens']} in ({totals['cached_input_tokens']} cached), "
        f"{totals['output_tokens']} out; cost {format_cost(totals['cost_usd'])}",
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
                f"{tokens} tokens, {format_cost(agent.cost_usd)}"
                + (f", network denials: {refused}" if refused else "")
                + (f" - {agent.error}" if agent.error else "")
            )
    if status.items:
        shown = _item_word(status)
        counts = ", ".join(f"{n} {shown(s)}" for s, n in sorted(totals["items"].items()))
        lines.append(f"items: {len(status.items)} ({counts})")
        for item in status.items:
            detail = item.error or ""
            lines.append(
                f"  #{item.index} {shown(item.status)} {item.agent_id or ''} {detail}".rstrip()
            )
    if run.status == "interrupted" and status.holder is None:
        lines.append(f"stopped; carry it on with `corral resume {run.run_id}`")
    return "\n".join(lines)


def _item_word(status: RunStatus) -> Callable[[str], str]:
    """An item the journal left `running` in a run that stopped is not running: said so."""
    stopped = status.run.status in ("interrupted", "failed") and status.holder is None
    return lambda word: "stopped" if stopped and word == "running" else word


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
    try:
        return datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, ValueError, OSError):  # a copied journal's impossible date
        return "undated"
