"""Text no UTF-8 can carry in what the CLI prints: a lone surrogate (`"\\ud800"` is valid JSON,
so a model endpoint's answer or an API request's task can hold one, and the journal keeps it).
The journal-reading commands print it spelled out (`\\ud800`, in `--json` the same string to a
JSON reader) instead of stopping mid-output with a traceback, and under the C locale a
`\\udc9b` never becomes the raw byte 0x9b (a terminal's CSI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from corral.agents import RunRecord, open_sqlite_store
from corral.orchestrator.runs._setup import JOURNAL_NAME
from tests._journal import agent_record

pytestmark = pytest.mark.hostile

TIMEOUT = 60
RUN = "run-odd"
ODD = {
    "lone high": "\ud800",
    "lone low": "\udfff",
    "pair turned round": "\udc00\ud83d",
    "escaped byte of a CSI": "\udc9b2J",
}
COMMANDS = [("status", RUN, "--json"), ("runs",), ("trace", RUN)]


def seed(home: Path, odd: str) -> None:
    async def write() -> None:
        async with open_sqlite_store(home / JOURNAL_NAME) as store:
            task = {"task": f"task {odd} end"}
            run = RunRecord(
                run_id=RUN, kind="exec", status="failed", created_at=1, updated_at=1, config=task
            )
            await store.create_run(run)
            agent = agent_record("agent-1", RUN).model_copy(
                update={"nickname": f"nick{odd}", "status": "failed", "error": f"error {odd}"}
            )
            await store.create_agent(agent)

    anyio.run(write)


def corral(home: Path, *args: str, locale: str | None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONIO"))}
    env.update({"CORRAL_HOME": str(home), **({"LC_ALL": locale} if locale else {})})
    return subprocess.run(
        [sys.executable, "-m", "corral", *args],
        cwd=home,
        env=env,
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )


CASES = [(name, None) for name in sorted(ODD)] + [
    ("escaped byte of a CSI", "C"),
    ("lone high", "C"),
]


@pytest.mark.parametrize(
    ("name", "locale"), CASES, ids=[f"{n}, {loc or 'UTF-8'}" for n, loc in CASES]
)
def test_a_lone_surrogate_in_the_journal_is_printed_spelled_out(
    name: str, locale: str | None, tmp_path: Path
) -> None:
    seed(tmp_path, ODD[name])
    for args in COMMANDS:
        result = corral(tmp_path, *args, locale=locale)
        assert result.returncode == 0, result.stderr.decode(errors="replace")[-400:]
        assert b"Traceback" not in result.stderr
        assert b"\x9b" not in result.stdout
        shown = result.stdout.decode("utf-8")  # valid UTF-8 throughout
        if "--json" in args:
            assert json.loads(shown)["run"]["config"]["task"] == f"task {ODD[name]} end"
        else:
            assert "\\ud" in shown
