"""Text a model controls, kept so that any database takes it: the one encoding both stores use.

PostgreSQL's TEXT refuses NUL characters, and neither PostgreSQL nor SQLite can store text that
is not UTF-8 (a lone surrogate such as `"\\ud800"`, which a model's JSON may carry). So that a
model's output can never make a write fail, such strings are kept as a marked JSON string (JSON
escapes both) and read back unchanged. A string that itself starts with the mark is kept the
same way, so nothing stored as given can be mistaken for a marked one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any, Final

MARK: Final = "\x01j"
"""Starts a string kept as JSON text."""


def encode_text(value: Any) -> Any:
    """`value` as a parameter every store accepts; anything but a string is returned as is."""
    if not isinstance(value, str):
        return value
    # `isascii` first: JSON text (most of what is stored) is ASCII, and checks without a copy.
    if "\x00" in value or value.startswith(MARK) or not (value.isascii() or _utf8(value)):
        return MARK + json.dumps(value)
    return value


def decode_text(value: Any) -> Any:
    """The inverse of `encode_text`."""
    if isinstance(value, str) and value.startswith(MARK):
        return json.loads(value[len(MARK) :])
    return value


def _utf8(value: str) -> bool:
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


class TextSafeConnection(sqlite3.Connection):
    """An SQLite connection that encodes every string parameter and decodes every column with
    `encode_text`/`decode_text`, so the store's queries need no change (pass it as `factory`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.row_factory = _decoded_row

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return super().execute(sql, _encoded(parameters))

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        return super().executemany(sql, (_encoded(row) for row in parameters))


def _encoded(parameters: Any) -> Any:
    if isinstance(parameters, tuple | list):
        # Most statements' text is plain ASCII: checked all at once, their parameters go as they
        # are (a value `encode_text` would change holds a NUL, the mark's \x01, or non-ASCII).
        text = "".join([value for value in parameters if isinstance(value, str)])
        if text.isascii() and "\x00" not in text and "\x01" not in text:
            return parameters
        return tuple(encode_text(value) for value in parameters)
    if isinstance(parameters, Mapping):
        return {name: encode_text(value) for name, value in parameters.items()}
    return tuple(encode_text(value) for value in parameters)


def _decoded_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(decode_text(value) for value in row)
