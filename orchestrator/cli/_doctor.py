"""`corral doctor [--journal PATH]`: check the journal (and the service's store) for damage.

Exit 0 when every file is whole (a home with no journal yet included), 1 when one is not, with
what is wrong and how to recover; 2 when `--journal` names no file.
A shared PostgreSQL journal (`[journal] url`) is checked by reading it; its password is never
printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._doctor import FileHealth


SERVICE_STORE = "service.sqlite"


def add_parser(sub: Any) -> None:
    doctor = sub.add_parser(
        "doctor", help="check the journal for damage and say how to recover", description=__doc__
    )
    doctor.add_argument(
        "--journal", type=Path, help="the journal to check (default: CORRAL_HOME's)"
    )
    doctor.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    import anyio.to_thread

    from .._doctor import check_file
    from ._approval import shown

    files = _files(args.journal)
    if args.journal is None and files and not files[0].is_file():
        # A fresh home: nothing has run yet, so there is nothing to be damaged.
        print(f"{shown(str(files[0]))}: not created yet (no run has used this home)")
        files = files[1:]
    results = [await anyio.to_thread.run_sync(check_file, path) for path in files]
    for health in results:
        print("\n".join(_report(health)))
    shared_ok = await _check_shared() if args.journal is None else True
    return 0 if all(health.ok for health in results) and shared_ok else 1


async def _check_shared() -> bool:
    """Read the configured PostgreSQL journal, if any, and say whether that worked."""
    from corral.agents import StoreError, load_config, open_journal
    from corral.agents._store import describe_journal

    url = load_config(cwd=Path.cwd()).config.journal.url
    if url is None:
        return True
    try:
        async with open_journal(url, read_only=True) as store:
            runs = await store.list_runs()
    except StoreError as exc:
        print(f"{describe_journal(url)}: UNREADABLE\n  problem: {exc}")
        return False
    print(f"{describe_journal(url)}: ok ({len(runs)} runs)")
    return True


def _files(journal: Path | None) -> list[Path]:
    from corral.agents import load_config
    from corral.tools import InvalidInput

    from ..runs import journal_path
    from ._approval import shown

    if journal is not None:
        path = journal.expanduser()
        if not path.is_file():
            raise InvalidInput(f"no journal file at {shown(str(path))}: check the --journal path")
        if not _looks_like_sqlite(path):
            # Most likely the wrong file: the recovery advice for damage (move it aside) must
            # not be offered for someone's notes or source file.
            raise InvalidInput(
                f"{shown(str(path))} is not an SQLite database (it does not start with SQLite's "
                "header): check the --journal path; if it is the journal, restore it from a copy"
            )
        return [path]
    config = load_config(cwd=Path.cwd()).config
    home_journal = journal_path(config)
    service = home_journal.with_name(SERVICE_STORE)
    # With a shared journal (`[journal] url`) the home holds no journal file to check.
    files = [home_journal] if config.journal.url is None else []
    return [*files, *([service] if service.is_file() else [])]


SQLITE_HEADER = b"SQLite format 3\x00"


def _looks_like_sqlite(path: Path) -> bool:
    """An empty file is a journal not yet written; anything else starts with SQLite's header."""
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_HEADER))
    except OSError:
        return True  # unreadable: let the check itself say so
    return head in (b"", SQLITE_HEADER)


def _report(health: FileHealth) -> list[str]:
    lines = [f"{health.path}: {'ok' if health.ok else 'DAMAGED'}"]
    lines += [f"  problem: {problem}" for problem in health.problems]
    lines += [f"  note: {note}" for note in health.notes]
    lines += [f"  {line}" for line in health.advice()]
    return lines
