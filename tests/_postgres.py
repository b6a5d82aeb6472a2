"""A throwaway PostgreSQL for the tests: one server per session, one fresh database per test.

`scripts/postgres` does the work (initdb into a temporary folder, a free loopback port); this
module starts it once, hands each test a database of its own, and stops it at the end of the
session even when tests fail. `CORRAL_TEST_POSTGRES_URL` names a server to use instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "postgres"
START_TIMEOUT_S = 120
"""initdb and the first start take a few seconds; on a loaded machine, far more."""
STATEMENT_TIMEOUT_S = 30


def postgres_installed() -> bool:
    return shutil.which("initdb") is not None or any(
        Path("/usr/lib/postgresql").glob("*/bin/initdb")
    )


@contextmanager
def throwaway_server() -> Iterator[str]:
    """The URL of a server that runs while the block does; from the environment if set there."""
    given = os.environ.get("CORRAL_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    if not postgres_installed():
        pytest.skip("PostgreSQL is not installed; scripts/bootstrap installs it (as root)")
    # Under the system temporary folder, not pytest's (mode 700): as root the server runs as
    # the `postgres` user, which must reach its folder.
    folder = Path(tempfile.gettempdir()) / f"corral-pg-{uuid.uuid4().hex[:12]}"
    try:
        started = _script("start", str(folder), "--fast")
        yield started.stdout.strip()
    finally:
        _script("stop", str(folder), check=False)


def _script(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        check=False,
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"scripts/postgres {' '.join(args)} failed: {done.stderr.strip()}")
    return done


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A new empty database on the server for one test, dropped afterwards."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    options = f"-c statement_timeout={STATEMENT_TIMEOUT_S * 1000}"
    with psycopg.connect(server_url, autocommit=True, connect_timeout=10, options=options) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(server_url, name)
    finally:
        with psycopg.connect(
            server_url, autocommit=True, connect_timeout=10, options=options
        ) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
