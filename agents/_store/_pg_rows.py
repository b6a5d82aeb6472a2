"""Rows in PostgreSQL: the SQL helpers of `PostgresStore`, text that PostgreSQL cannot hold, and
the saved results of committed writes.

PostgreSQL's TEXT refuses NUL characters and text that is not UTF-8 (a lone surrogate from a
model's JSON); every string parameter and column goes through `to_pg`/`from_pg` (`_text`'s
encoding, which the SQLite store shares), ids included, so lookups match.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from typing import Any, TypeVar

from ._delete import DeletedRun
from ._lease import LeaseRecord
from ._records import JournalEvent, Row, _Record, from_row
from ._text import decode_text, encode_text

R = TypeVar("R", bound=_Record)

KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "agents": ("agent_id",),
    "items": ("run_id", "index"),
    "ledger": ("agent_id", "call_id"),
    "leases": ("run_id", "holder"),
}

to_pg = encode_text
"""A parameter PostgreSQL accepts, for any value a record holds."""
from_pg = decode_text


def params(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(to_pg(value) for value in values)


@cache
def select(cls: type[_Record], table: str) -> str:
    return f"SELECT {', '.join(quoted(cls.model_fields))} FROM {table}"


@cache
def where(table: str) -> str:
    return " AND ".join(f'"{name}" = %s' for name in KEYS[table])


def quoted(names: Iterable[str]) -> list[str]:
    return [f'"{name}"' for name in names]


def fetch(conn: Any, cls: type[R], sql: str, args: Iterable[Any]) -> list[R]:
    names = list(cls.model_fields)
    rows = conn.execute(sql, params(args)).fetchall()
    return [
        from_row(cls, {n: from_pg(v) for n, v in zip(names, values, strict=True)})
        for values in rows
    ]


def get(conn: Any, cls: type[R], table: str, *key: Any) -> R | None:
    found = fetch(conn, cls, f"{select(cls, table)} WHERE {where(table)}", key)
    return found[0] if found else None


def exists(conn: Any, table: str, *key: Any) -> bool:
    sql = f"SELECT 1 FROM {table} WHERE {where(table)}"
    return conn.execute(sql, params(key)).fetchone() is not None


def insert(conn: Any, table: str, row: Row) -> None:
    names = ", ".join(quoted(row))
    values = ", ".join(["%s"] * len(row))
    conn.execute(f"INSERT INTO {table} ({names}) VALUES ({values})", params(row.values()))


def update(conn: Any, table: str, row: Row) -> None:
    keys = KEYS[table]
    changing = [name for name in row if name not in keys]
    changes = ", ".join(f'"{name}" = %s' for name in changing)
    args = [row[name] for name in changing] + [row[name] for name in keys]
    conn.execute(f"UPDATE {table} SET {changes} WHERE {where(table)}", params(args))


def encode_result(value: Any) -> str:
    """What a write answered, saved with it so a retry after a lost commit answers the same."""
    if value is None or isinstance(value, bool | int):
        return json.dumps({"value": value})
    if isinstance(value, JournalEvent):
        return json.dumps({"event": value.model_dump(mode="json")})
    if isinstance(value, LeaseRecord):
        return json.dumps({"lease": value.model_dump(mode="json")})
    if isinstance(value, DeletedRun):
        return json.dumps({"deleted": value.model_dump(mode="json")})
    if isinstance(value, list) and all(isinstance(e, JournalEvent) for e in value):
        return json.dumps({"events": [e.model_dump(mode="json") for e in value]})
    raise TypeError(f"a store write answered a {type(value).__name__}, which is not saved")


def decode_result(text: str) -> Any:
    saved = json.loads(text)
    if "event" in saved:
        return JournalEvent.model_validate(saved["event"])
    if "lease" in saved:
        return LeaseRecord.model_validate(saved["lease"])
    if "deleted" in saved:
        return DeletedRun.model_validate(saved["deleted"])
    if "events" in saved:
        return [JournalEvent.model_validate(e) for e in saved["events"]]
    return saved["value"]
