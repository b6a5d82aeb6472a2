"""A new user's home on read-only media (a mounted snapshot, a read-only volume): a command
that would start a run is refused in one line before it prints a run id that is never kept,
and says what to do. Reading commands keep working (test_readonly_journal.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from ._cli import corral_argv, corral_env
from .test_readonly_journal import RUN, fingerprint, write_journal

pytestmark = pytest.mark.anyio

WAIT = 30.0
UNREACHABLE_MODEL = "http://127.0.0.1:9/v1"
NEEDS_BWRAP = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


async def run_read_only(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    argv = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(home), str(home), *corral_argv(*args)]
    env = corral_env(home, UNREACHABLE_MODEL)
    with anyio.fail_after(WAIT):
        return await anyio.run_process(argv, env=env, cwd=home.parent, check=False)


def fanout_args(folder: Path) -> tuple[str, ...]:
    items = folder / "items.jsonl"
    items.write_text('{"n": 1}\n', encoding="utf-8")
    schema = folder / "schema.json"
    schema.write_text(json.dumps({"type": "object"}), encoding="utf-8")
    out = str(folder / "out.jsonl")
    return (
        "fanout",
        "--items",
        str(items),
        "--template",
        "{n}",
        "--schema",
        str(schema),
        "--out",
        out,
    )


@NEEDS_BWRAP
@pytest.mark.parametrize("command", ["exec", "fanout", "resume"])
async def test_starting_a_run_on_a_read_only_home_is_refused_before_a_run_id_is_printed(
    tmp_path: Path, command: str
) -> None:
    home = tmp_path / "home"
    await write_journal(home)
    args = {
        "exec": ("exec", "say hi"),
        "fanout": fanout_args(tmp_path),
        "resume": ("resume", RUN, "and again"),
    }[command]
    before = fingerprint(home)
    done = await run_read_only(home, *args)
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert stderr.count("\n") == 1, stderr
    assert f"cannot write the journal {home / 'journal.sqlite'}" in stderr
    assert "set CORRAL_HOME to a folder you can write to" in stderr
    assert "run-" not in stderr.replace(RUN, ""), "no run id is promised"
    assert fingerprint(home) == before
