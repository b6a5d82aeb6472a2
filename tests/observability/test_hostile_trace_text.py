"""`corral trace RUN` against a journal whose rows carry terminal escapes: agent names and roles
a model chose when it spawned them, errors a tool or a server wrote, rows of a journal someone
gave you (`corral journal copy`). Each is spelled out, as `corral status` spells them."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents._store import RunRecord, open_journal
from tests.e2e._cli import corral_env, run_corral
from tests.store.conformance.test_store import make_agent

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

HOSTILE = {
    "osc-title": "\x1b]0;owned\x07",
    "erase-line": "\x1b[2K\rall good",
    "bidi-override": "\u202etxt.exe",
    "c1-csi": "\x9b2J",
    "clipboard": "\x1b]52;c;cm0gLXJmIH4=\x07",
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("field", ["nickname", "role", "error"])
async def test_trace_spells_out_what_a_journal_row_carries(
    tmp_path: Path, text: str, field: str
) -> None:
    home, folder = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    folder.mkdir()
    async with open_journal(home / "journal.sqlite") as store:
        run = RunRecord(
            run_id="run-1",
            kind="exec",
            status="failed",
            created_at=1_800_000_000.0,
            updated_at=1_800_000_000.0,
            config={"task": "fix it"},
        )
        await store.create_run(run)
        await store.create_agent(make_agent("agent-1", "run-1"))
        await store.update_agent("agent-1", status="failed", **{field: f"x{text}y"})
    done = await run_corral(["trace", "run-1"], env=corral_env(home), cwd=folder)
    assert done.code == 0, done.stderr
    acting = {c for c in done.stdout if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0}
    acting |= {c for c in done.stdout if 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069}
    assert not acting, done.stdout
