"""`corral journal migrate [--url URL]`, `corral journal copy --from SRC --to DST` and
`corral journal delete RUN [--force]`.

`migrate` brings a journal (the configured one, or `--url`) to this corral's schema and says
which migrations it applied. `copy` moves runs between journals (SQLite to PostgreSQL, say) with
their ids and sequence numbers, and the memories they left with their insights; it never
overwrites a run the destination holds and may be run again. `delete` deletes a run from the
configured journal, then its payload blobs (in the journal's database, or the home's `blobs/`
folder) that no other run references.
A journal is `postgresql://...`, `sqlite:PATH` or a path; passwords are never printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    journal = sub.add_parser(
        "journal", help="migrate a journal, copy runs between journals, or delete a run"
    )
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
    delete = actions.add_parser(
        "delete", help="delete a run with its events, items, ledger and payload blobs"
    )
    delete.add_argument("run_id", metavar="RUN", help="the run (`corral runs` lists them)")
    delete.add_argument(
        "--force",
        action="store_true",
        help="delete it even if it may still be running (its status is running, or a process "
        "holds its lease)",
    )
    delete.set_defaults(handler=delete_run)


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

    from ._approval import shown

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
        skipped = ", ".join(shown(run_id) for run_id in report.skipped)
        print(f"skipped {len(report.skipped)} run(s) already there: {skipped}")
    print(f"copied {remembered.memories} memories and {remembered.insights} insight(s)")
    if remembered.kept:
        print(
            f"left out {remembered.kept} memories whose ids the destination already holds for "
            "other memories (its own were kept)"
        )
    if isinstance(source, Path) and isinstance(dest, str):
        await _copy_blobs(source.parent, dest, [*report.copied, *report.skipped], args.runs is None)
    return 0


async def _copy_blobs(home: Path, url: str, run_ids: list[str], unowned: bool) -> None:
    """Copy the runs' payload blobs from the home's `blobs/` folder into the database's tables,
    so Temporal histories that reference them still resolve."""
    from corral.agents._store import redact_url

    folder = home / "blobs"  # the codec's BLOBS_DIR, named here without importing Temporal
    if not folder.is_dir():
        return
    try:
        from corral.orchestrator.temporal._blobs import FileBlobStore
        from corral.orchestrator.temporal._blobs_copy import copy_blobs
        from corral.orchestrator.temporal._blobs_postgres import PostgresBlobStore
    except ImportError:  # no `temporal` extra
        print(f"left the payload blobs in {folder}: install corral[temporal] and copy again")
        return
    dest = PostgresBlobStore(url, redact_url(url))
    done = await copy_blobs(FileBlobStore(folder), dest, run_ids, unowned=unowned)
    print(f"copied {_many(done.copied, 'payload blob')} from {folder} to {dest.where}")
    if done.corrupt:
        print(
            f"left {_many(done.corrupt, 'corrupt payload blob')} in {folder}: their bytes "
            "do not match its SHA-256"
        )


async def delete_run(args: argparse.Namespace) -> int:
    import time

    from corral.agents import load_config
    from corral.agents._store import UnknownRun, describe_journal, journal_target, open_journal
    from corral.tools import CorralError, OperationFailed

    from ._status import refuse_an_agent_id

    config = load_config(cwd=Path.cwd()).config
    target = journal_target(config)
    gone: UnknownRun | None = None
    async with open_journal(target) as store:
        await refuse_an_agent_id(store, args.run_id)
        try:
            deleted = await store.delete_run(args.run_id, at=time.time(), force=args.force)
        except UnknownRun as exc:
            gone, deleted = exc, None
    # After the journal: a run that stays (refused) keeps its payloads. A run already gone
    # from the journal may still have blobs, when an earlier delete stopped before them.
    try:
        blobs, where = await _delete_blobs(config, args.run_id)
    except (CorralError, OSError) as exc:
        kept = "is not in the journal" if deleted is None else "was deleted from the journal"
        raise OperationFailed(
            f"run {args.run_id} {kept}, but its payload blobs could not be deleted ({exc}); "
            f"run `corral journal delete {args.run_id}` again to delete them"
        ) from exc
    forgotten = await _forget_memories(target, args.run_id)
    journal = describe_journal(target)
    if deleted is None:
        if not blobs and not forgotten:
            assert gone is not None
            raise gone
        what = f"run {args.run_id} was not in {journal}"
    else:
        counts = [
            _many(deleted.agents, "agent"),
            _many(deleted.events, "event"),
            _many(deleted.items, "item"),
            _many(deleted.ledger, "ledger entry", "ledger entries"),
            _many(deleted.leases, "lease"),
        ]
        what = f"deleted run {args.run_id} from {journal}: {', '.join(counts)}"
    print(
        f"{what}; {_many(blobs, 'payload blob')} deleted from {where}; "
        f"{_many(forgotten, 'memory', 'memories')} it left forgotten"
    )
    return 0


async def _forget_memories(target: Any, run_id: str) -> int:
    """Forget the memories the run left (and so the insights citing them), as
    `corral memory forget` would; answers how many."""
    from corral.orchestrator.memory import open_memories

    async with open_memories(target) as store:
        return await store.forget_run(run_id)


async def _delete_blobs(config: Any, run_id: str) -> tuple[int, str]:
    """Delete the run's blobs no other run references; answers how many, and where."""
    from corral.agents._store import redact_url

    try:
        from corral.orchestrator.temporal._blobs import FileBlobStore
        from corral.orchestrator.temporal._blobs_postgres import PostgresBlobStore
        from corral.orchestrator.temporal._codec import BLOBS_DIR
    except ImportError:  # no `temporal` extra: no run here ever sent a payload by reference
        return 0, "nowhere (the temporal extra is not installed)"
    url = config.journal.url
    store = (
        PostgresBlobStore(url, redact_url(url))
        if url is not None
        else FileBlobStore(config.home / BLOBS_DIR)
    )
    return await store.delete_run(run_id), store.where


def _many(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


async def _copy_memories(source: Any, dest: Any, runs: list[str] | None) -> Any:
    """The memories of the copied runs (all of them without --run), with their insights."""
    from corral.orchestrator.memory import copy_memories, open_memories

    async with (
        open_memories(source, read_only=True) as src,
        open_memories(dest) as dst,
    ):
        return await copy_memories(src, dst, run_ids=runs)
