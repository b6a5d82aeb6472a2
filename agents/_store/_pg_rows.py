"""Rows in PostgreSQL: the `Dialect` of `PostgresStore`, text that PostgreSQL cannot hold, and
the saved results of committed writes.

PostgreSQL's TEXT refuses NUL characters and text that is not UTF-8 (a lone surrogate from a
model's JSON); every string parameter and column goes through `to_pg`/`from_pg` (`_text`'s
encoding, which the SQLite store shares), ids included, so lookups match.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ._delete import DeletedRun
from ._lease import LeaseRecord
from ._records import JournalEvent
from ._sql import Dialect
from ._text import decode_text, encode_text

to_pg = encode_text
"""A parameter PostgreSQL accepts, for any value a record holds."""
from_pg = decode_text


def params(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(to_pg(value) for value in values)


@lru_cache(maxsize=1024)
def _pg_sql(text: str) -> str:
    # The shared statements hold no literal `?` or `%`, so this is the whole translation.
    return text.replace("?", "%s")


class PgDialect(Dialect):
    """PostgreSQL's differences: psycopg's `%s`, a `pos` column for insertion order, row locks,
    and `to_pg`/`from_pg` on every parameter and column (PostgreSQL's TEXT refuses NUL)."""

    order = "pos"
    lock = " FOR UPDATE"
    no_limit = None

    def sql(self, text: str) -> str:
        return _pg_sql(text)

    def params(self, values: Iterable[Any]) -> tuple[Any, ...]:
        return params(values)

    def rows(self, conn: Any, sql: str, args: Iterable[Any]) -> list[tuple[Any, ...]]:
        found = conn.execute(self.sql(sql), self.params(args)).fetchall()
        return [tuple(from_pg(value) for value in row) for row in found]


POSTGRES = PgDialect()


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
