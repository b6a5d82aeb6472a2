"""The SQL both journal databases take, and the small `Dialect` that tells them apart.

The statements are written once with `?` placeholders; a `Dialect` renders them for its driver,
encodes parameters, decodes columns and names the insertion-order column and the row lock. The
store operations built from these helpers are `_sql_ops`; connections and transactions stay
with each store.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, TypeVar

from ._records import Row, _Record, from_row

R = TypeVar("R", bound=_Record)
Conn = Any
"""A DB-API connection: `sqlite3.Connection` or psycopg's."""

KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "agents": ("agent_id",),
    "items": ("run_id", "index"),
    "ledger": ("agent_id", "call_id"),
    "leases": ("run_id", "holder"),
}

MAX_ROWS_PER_INSERT = 500
"""Rows one multi-row INSERT holds, well inside both databases' limits on parameters."""


class Dialect:
    """SQLite's way, which PostgreSQL's subclass overrides where it differs.

    SQLite's connection (`_text.TextSafeConnection`) encodes parameters and decodes columns
    itself, so here both are the identity and cost nothing on the hot path."""

    order = "rowid"
    """The column that keeps insertion order."""
    lock = ""
    """What a SELECT ends with to lock its rows until commit (SQLite's write lock covers all)."""
    no_limit: int | None = -1
    """The LIMIT that means none."""

    def sql(self, text: str) -> str:
        """`text`, written with `?` placeholders, in this driver's style."""
        return text

    def params(self, values: Iterable[Any]) -> tuple[Any, ...]:
        return tuple(values)

    def rows(self, conn: Conn, sql: str, args: Iterable[Any]) -> list[tuple[Any, ...]]:
        """The rows `sql` selects, each column decoded."""
        return list(conn.execute(self.sql(sql), self.params(args)).fetchall())


SQLITE = Dialect()


@cache
def select(cls: type[_Record], table: str) -> str:
    return f"SELECT {', '.join(quoted(cls.model_fields))} FROM {table}"


@cache
def where(table: str) -> str:
    return " AND ".join(f'"{name}" = ?' for name in KEYS[table])


def quoted(names: Iterable[str]) -> list[str]:
    return [f'"{name}"' for name in names]


def fetch(d: Dialect, conn: Conn, cls: type[R], sql: str, args: Iterable[Any]) -> list[R]:
    names = list(cls.model_fields)
    return [
        from_row(cls, dict(zip(names, values, strict=True))) for values in d.rows(conn, sql, args)
    ]


def get(
    d: Dialect, conn: Conn, cls: type[R], table: str, *key: Any, lock: bool = False
) -> R | None:
    """The record at `key`; `lock` holds its row until commit, so a concurrent update waits."""
    sql = f"{select(cls, table)} WHERE {where(table)}{d.lock if lock else ''}"
    found = fetch(d, conn, cls, sql, key)
    return found[0] if found else None


def exists(d: Dialect, conn: Conn, table: str, *key: Any) -> bool:
    sql = d.sql(f"SELECT 1 FROM {table} WHERE {where(table)}")
    return conn.execute(sql, d.params(key)).fetchone() is not None


def execute(d: Dialect, conn: Conn, sql: str, args: Iterable[Any]) -> int:
    """Run a statement; how many rows it changed."""
    return int(conn.execute(d.sql(sql), d.params(args)).rowcount)


def insert(
    d: Dialect, conn: Conn, table: str, rows: Sequence[Row], *, skip_taken: bool = False
) -> int:
    """Insert `rows` (all with the same columns), several to a statement; how many went in.

    `skip_taken` leaves out, instead of failing on, a row whose key is already taken, so the
    caller learns that from the count without first reading for it."""
    if not rows:
        return 0
    names = tuple(rows[0])
    added = 0
    for start in range(0, len(rows), MAX_ROWS_PER_INSERT):
        chunk = rows[start : start + MAX_ROWS_PER_INSERT]
        sql = _insert_sql(table, names, len(chunk), skip_taken)
        added += execute(d, conn, sql, [row[name] for row in chunk for name in names])
    return added


@cache
def _insert_sql(table: str, names: tuple[str, ...], count: int, skip_taken: bool) -> str:
    """The INSERT of `count` rows with columns `names` (made once: appends come in a few
    shapes, and building the text cost more than running it)."""
    head = f"INSERT INTO {table} ({', '.join(quoted(names))}) VALUES "
    one = "(" + ", ".join(["?"] * len(names)) + ")"
    tail = f" ON CONFLICT ({', '.join(quoted(KEYS[table]))}) DO NOTHING" if skip_taken else ""
    return head + ", ".join([one] * count) + tail


def update(d: Dialect, conn: Conn, table: str, row: Row, *, keys: Row | None = None) -> int:
    """Set `row`'s columns in the row at its key (or at `keys`); how many rows changed."""
    key_names = KEYS[table]
    if keys is None:
        keys = {name: row[name] for name in key_names}
    changing = [name for name in row if name not in key_names]
    args = [row[name] for name in changing] + [keys[name] for name in key_names]
    return execute(
        d, conn, f"UPDATE {table} SET {assignments(changing)} WHERE {where(table)}", args
    )


def assignments(names: Iterable[str]) -> str:
    """`"a" = ?, "b" = ?`: the SET list of an UPDATE."""
    return ", ".join(f'"{name}" = ?' for name in names)
