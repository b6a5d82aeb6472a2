"""`corral doctor`'s checks: is each SQLite file of corral's home whole, and how to recover it.

Each file is opened read-only (nothing here writes, so a damaged file is never made worse) and
put through SQLite's own `integrity_check` and `foreign_key_check`; a `-wal` beside it is
reported with its size, since its commits are not in the main file until a checkpoint.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

MAX_REPORTED: Final = 10
"""Problems listed per file; SQLite may report thousands for one bad page."""


@dataclass(frozen=True)
class FileHealth:
    """What the checks found in one SQLite file."""

    path: Path
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def advice(self) -> list[str]:
        """How to recover, for a file with problems."""
        if self.ok:
            return []
        rescued = self.path.with_name(f"{self.path.stem}.recovered{self.path.suffix}")
        return [
            "stop every corral process that uses it, then either restore it from a copy, or "
            "salvage what SQLite can still read:",
            f'  sqlite3 {self.path} ".recover" | sqlite3 {rescued}',
            f"  mv {self.path} {self.path}.damaged && mv {rescued} {self.path}",
        ]


def check_file(path: Path) -> FileHealth:
    """Run SQLite's integrity and foreign-key checks on `path`, read-only."""
    if not path.is_file():
        return FileHealth(path, problems=[f"{path} does not exist"])
    notes = _wal_notes(path)
    try:
        conn = _open(path)
    except sqlite3.Error as exc:
        return FileHealth(path, problems=[f"cannot be opened: {exc}"], notes=notes)
    try:
        problems = _integrity(conn) + _foreign_keys(conn)
    except sqlite3.Error as exc:
        problems = [f"the check itself failed: {exc}"]
    finally:
        conn.close()
    return FileHealth(path, problems=problems, notes=notes)


def _open(path: Path) -> sqlite3.Connection:
    last: sqlite3.Error | None = None
    for query in ("mode=ro", "mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True)
        except sqlite3.Error as exc:
            last = exc
            continue
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            conn.close()
            last = exc
            continue
        return conn
    assert last is not None
    raise last


def _integrity(conn: sqlite3.Connection) -> list[str]:
    rows = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    if rows == ["ok"]:
        return []
    shown = rows[:MAX_REPORTED]
    more = len(rows) - len(shown)
    return shown + ([f"... and {more} more"] if more > 0 else [])


def _foreign_keys(conn: sqlite3.Connection) -> list[str]:
    rows = list(conn.execute("PRAGMA foreign_key_check"))
    found = [
        f"table {table} row {rowid} points at a missing {parent}"
        for table, rowid, parent, _ in rows
    ]
    return found[:MAX_REPORTED]


def _wal_notes(path: Path) -> list[str]:
    wal = path.with_name(path.name + "-wal")
    if not wal.is_file() or wal.stat().st_size == 0:
        return []
    return [
        f"{wal.name} holds {wal.stat().st_size:,} bytes not yet checkpointed into the file; "
        "keep it next to the file when copying it"
    ]
