"""What the journal-reading commands print: piped into `head`, `corral runs`, costs.

The commands run as real processes against a journal seeded here, so what is checked is what a
person at a terminal (or a pipe) gets: the exit code, stdout and stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from corral.agents import AgentRecord, ItemRecord, RunRecord, open_sqlite_store
from corral.orchestrator.cli._invocation import corral_invocation
from corral.orchestrator.runs._setup import JOURNAL_NAME

TIMEOUT = 60
RUN = "run-piped"


def seed(home: Path) -> None:
    """Three runs (one fan-out of many items, priced at nothing) in `home`'s journal."""

    async def write() -> None:
        async with open_sqlite_store(home / JOURNAL_NAME) as store:
            for n, (run_id, kind, status, config) in enumerate(
                [
                    ("run-old", "exec", "completed", {"task": "Fix the flaky test\nin CI"}),
                    (RUN, "fanout", "done", {"template": "Summarise {path}"}),
                    ("run-new", "exec", "failed", {"task": "x" * 90}),
                ]
            ):
                record = RunRecord(
                    run_id=run_id,
                    kind=kind,
                    status=status,
                    created_at=1_000 + n,
                    updated_at=1_000 + n,
                    config=config,
                )
                await store.create_run(record)
            await store.create_agent(agent(RUN))
            items = [ItemRecord(run_id=RUN, index=i, input={"path": f"f{i}"}) for i in range(300)]
            await store.put_items(RUN, items)

    anyio.run(write)


def agent(run_id: str) -> AgentRecord:
    return AgentRecord(
        agent_id="worker-1",
        run_id=run_id,
        parent_id=None,
        nickname="worker-1",
        role="worker",
        status="completed",
        created_at=1_000,
        updated_at=1_000,
        base_instructions="i",
        config={},
        usage={"input_tokens": 1200, "output_tokens": 80},
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "corral-home"
    home.mkdir()
    seed(home)
    return home


def corral(
    home: Path, *args: str, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CORRAL_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "corral", *args],
        cwd=home,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ("status", RUN, "--json"),
        ("status", RUN),
        ("export", RUN),
        ("runs",),
        ("runs", "--json"),
        ("--help",),
        ("runs", "--help"),
    ],
    ids=" ".join,
)
def test_output_cut_short_by_the_reader_ends_quietly_with_exit_0(
    args: tuple[str, ...], home: Path
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`head`) is gone before the first byte is written
    try:
        result = corral(home, *args, stdout=write_end)
    finally:
        os.close(write_end)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "BrokenPipe" not in result.stderr


def test_runs_are_listed_newest_first_with_a_title_and_one_status_word(home: Path) -> None:
    lines = corral(home, "runs").stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["run-new", RUN, "run-old"]
    assert lines[1].split()[2] == "completed"  # the journal's `done`
    assert lines[1].endswith("Summarise {path}")
    assert lines[2].endswith("Fix the flaky test")
    assert lines[0].endswith("x" * 59 + "\u2026")


def test_runs_limit_keeps_the_newest(home: Path) -> None:
    lines = corral(home, "runs", "--limit", "1").stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["run-new"]
    listed = json.loads(corral(home, "runs", "--json", "--limit", "2").stdout)
    assert [r["run_id"] for r in listed] == ["run-new", RUN]
    assert listed[1]["title"] == "Summarise {path}"


def test_a_negative_limit_is_refused_with_one_line(home: Path) -> None:
    result = corral(home, "runs", "--limit", "-1")
    assert result.returncode == 2
    assert "give 0 (all runs) or a positive number" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_run_on_an_unpriced_model_shows_no_dollar_cost(home: Path) -> None:
    out = corral(home, "status", RUN).stdout
    assert "$0.0000" not in out
    assert "cost \u2014" in out
    assert "1280 tokens, \u2014" in out


def test_next_step_lines_name_corral_as_it_can_be_called_again(tmp_path: Path) -> None:
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    program = venv_bin / "corral"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    elsewhere = tmp_path / "bin"
    elsewhere.mkdir()
    assert corral_invocation(str(program), path=str(elsewhere)) == str(program)
    assert corral_invocation(str(program), path=str(venv_bin)) == "corral"
    assert corral_invocation("/x/__main__.py", path="").endswith(" -m corral")


def test_runs_status_filter_uses_the_words_runs_shows(home: Path) -> None:
    listed = json.loads(corral(home, "runs", "--json", "--status", "completed").stdout)
    assert [r["run_id"] for r in listed] == [RUN, "run-old"]
