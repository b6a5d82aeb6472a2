"""`corral journal migrate [--url URL]` and `corral journal copy --from SRC --to DST`.

`migrate` brings a journal (the configured one, or `--url`) to this corral's schema and says
which migrations it applied. `copy` moves runs between journals (SQLite to PostgreSQL, say) with
their ids and sequence numbers, and the memories they left with their insights; it never
overwrites a run the destination holds and may be run again. A journal is `postgresql://...`,
`sqlite:PATH` or a path; passwords are never printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    journal = sub.add_parser("journal", help="migrate a journal, or copy runs between journals")
    actions = journal.add_subparsers(dest="journal_command", metavar="SUBCOMMAND", required=True)
    migrate = actions.add_parser(
        "migrate", help="bring the journal to this corral's schema and say what was applied"
    )
    migrate.add_argument(
        "--url",
        metavar="JOURNAL",
        help="postgresql://... or sqlite:PATH (default: the configured journal)",
    )
    migrate.set_defaults(handler=migrate_journal)
    copy = actions.add_parser(
        "copy", help="copy runs with their ids and sequence numbers into another journal"
    )
    copy.add_argument(
        "--from", dest="source", metavar="JOURNAL", help="sqlite:PATH (default: the configured)"
    )
    copy.add_argument(
        "--to", dest="dest", metavar="JOURNAL", required=True, help="postgresql://..."
    )
    copy.add_argument(
        "--run", dest="runs", action="append", metavar="RUN", help="copy only this run (repeatable)"
    )
    copy.set_defaults(handler=copy_journal)


def _configured() -> Any:
    from corral.agents import journal_target, load_config

    return journal_target(load_config(cwd=Path.cwd()).config)


async def migrate_journal(args: argparse.Namespace) -> int:
    from corral.agents._store import migrate_journal as migrate
    from corral.agents._store import parse_target

    target = _configured() if args.url is None else parse_target(args.url)
    done = await migrate(target)
    print(done.describe())
    return 0


async def copy_journal(args: argparse.Namespace) -> int:
    from corral.agents._store import (
        describe_journal,
        open_journal,
        parse_target,
    )
    from corral.agents._store._copy import copy_runs
    from corral.tools import InvalidInput

    source = _configured() if args.source is None else parse_target(args.source)
    dest = parse_target(args.dest)
    if describe_journal(source) == describe_journal(dest):
        raise InvalidInput("--from and --to name the same journal; name two different ones")
    if isinstance(source, Path) and not source.is_file():
        raise InvalidInput(f"no journal at {source}; give --from sqlite:PATH of an existing one")
    async with open_journal(source, read_only=True) as src, open_journal(dest) as dst:
        report = await copy_runs(src, dst, run_ids=args.runs)
    remembered = await _copy_memories(source, dest, args.runs)
    where = describe_journal(dest)
    print(f"copied {len(report.copied)} run(s) with {report.events} event(s) to {where}")
    if report.skipped:
        print(f"skipped {len(report.skipped)} run(s) already there: {', '.join(report.skipped)}")
    print(f"copied {remembered.memories} memories and {remembered.insights} insight(s)")
    return 0


async def _copy_memories(source: Any, dest: Any, runs: list[str] | None) -> Any:
    """The memories of the copied runs (all of them without --run), with their insights."""
    from corral.orchestrator.memory import copy_memories, open_memories

    async with (
        open_memories(source, read_only=True) as src,
        open_memories(dest) as dst,
    ):
        return await copy_memories(src, dst, run_ids=runs)
