"""Reading commands open a journal on read-only media and never write to it.

Tests run as root, and root ignores permission bits, so the journal's folder is bind-mounted
read-only with bubblewrap: any write (a migration, `journal_mode = WAL`, a new `-shm`) would fail
with EROFS. Two journals: one closed cleanly (no `-wal`/`-shm` beside it), and one copied while
a writer held it open, so its last transactions are only in the `-wal`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import anyio
import pytest

from corral.agents._store import AgentRecord, RunRecord, open_sqlite_store

from ._cli import corral_argv, corral_env

pytestmark = pytest.mark.anyio

WAIT = 30.0
RUN = "run-ro"
NEEDS_BWRAP = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


async def write_journal(home: Path) -> None:
    async with open_sqlite_store(home / "journal.sqlite") as store:
        await store.create_run(
            RunRecord(
                run_id=RUN, kind="exec", status="done", created_at=1.0, updated_at=2.0, config={}
            )
        )
        await store.create_agent(
            AgentRecord(
                agent_id="agent-ro",
                run_id=RUN,
                parent_id=None,
                nickname="root",
                role="general",
                status="completed",
                created_at=1.0,
                updated_at=2.0,
                base_instructions="be brief",
                config={"task": "say hi"},
            )
        )
        await store.append_event("agent-ro", "user_input", {"text": "say hi"}, at=1.5)


def copy_while_open(source: Path, target: Path) -> None:
    """`target` as a killed writer leaves it: the last commit only in the `-wal`."""
    target.mkdir()
    conn = sqlite3.connect(source / "journal.sqlite")
    try:
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.execute("UPDATE runs SET status = 'interrupted' WHERE run_id = ?", (RUN,))
        conn.commit()
        for name in ("journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"):
            shutil.copyfile(source / name, target / name)
    finally:
        conn.close()


def fingerprint(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


async def run_read_only(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    argv = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(home), str(home), *corral_argv(*args)]
    with anyio.fail_after(WAIT):
        return await anyio.run_process(argv, env=corral_env(home), cwd=home.parent, check=False)


@NEEDS_BWRAP
@pytest.mark.parametrize("left", ["closed", "open-wal"])
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (("runs",), RUN),
        (("status", RUN), "agent-ro"),
        (("export", RUN), '"type": "event"'),
        (("trace", RUN), "root"),
    ],
    ids=["runs", "status", "export", "trace"],
)
async def test_reading_commands_work_on_a_read_only_journal_and_change_nothing(
    tmp_path: Path, left: str, command: tuple[str, ...], expected: str
) -> None:
    home = tmp_path / "home"
    await write_journal(home)
    if left == "open-wal":
        copied = tmp_path / "copied"
        copy_while_open(home, copied)
        home = copied
    before = fingerprint(home)
    done = await run_read_only(home, *command)
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, stderr
    assert expected in stdout and "Traceback" not in stderr
    if left == "open-wal" and command[0] == "runs":
        assert "interrupted" in stdout, "the commit only in the -wal was read"
    assert fingerprint(home) == before, "nothing in the journal's folder changed"


@NEEDS_BWRAP
async def test_runs_on_a_folder_with_no_journal_says_so_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "empty"
    home.mkdir()
    done = await run_read_only(home, "runs", "--json")
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == [] and list(home.iterdir()) == []
