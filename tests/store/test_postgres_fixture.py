"""The throwaway PostgreSQL: each test gets an empty database of its own."""

from __future__ import annotations

import psycopg


def test_each_test_gets_an_empty_database_of_its_own(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        conn.execute("CREATE TABLE mine (n integer)")
    assert tables == (0,)


def test_a_second_test_does_not_see_the_first_ones_tables(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        found = conn.execute("SELECT to_regclass('public.mine') IS NULL").fetchone()
    assert found == (True,)
