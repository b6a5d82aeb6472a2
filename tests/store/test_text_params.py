"""An SQLite statement's parameters go unencoded only when all their text is plain ASCII; one
odd value among plain ones is still encoded, and every value reads back as it was given."""

from __future__ import annotations

import sqlite3

import pytest

from corral.agents._store._text import MARK, TextSafeConnection

ODD = {
    "nul": "a\x00b",
    "mark-lookalike": MARK + "plain",
    "control-one": "\x01",
    "non-ascii": "café",
    "lone-surrogate": "\ud800",
}


@pytest.mark.parametrize("odd", list(ODD.values()), ids=list(ODD))
def test_one_odd_value_among_plain_ones_reads_back_as_given(odd: str) -> None:
    conn = sqlite3.connect(":memory:", factory=TextSafeConnection, isolation_level=None)
    conn.execute("CREATE TABLE t (a, b, c, d)")
    values = ("plain", odd, 3, "also plain")
    conn.execute("INSERT INTO t VALUES (?, ?, ?, ?)", values)
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [list(values)])
    assert conn.execute("SELECT * FROM t").fetchall() == [values, values]
    conn.close()


def test_plain_ascii_is_stored_as_it_is() -> None:
    conn = sqlite3.connect(":memory:", factory=TextSafeConnection, isolation_level=None)
    conn.execute("CREATE TABLE t (a, b)")
    conn.execute("INSERT INTO t VALUES (?, ?)", ["plain text", 1])
    # A marked (encoded) value would be longer: the mark and JSON quotes.
    assert conn.execute("SELECT length(a) FROM t").fetchone() == (len("plain text"),)
    conn.close()
