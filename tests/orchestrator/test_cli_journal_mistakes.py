"""Reading the journal with the wrong word: an agent's id where a run's is wanted, a status no
run has. Each answer says what was wrong and what to give instead, in one line; a stopped
run's unfinished items are not shown as running."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from corral.agents import ItemRecord, RunRecord, open_sqlite_store
from corral.orchestrator.cli._main import main
from corral.orchestrator.runs._setup import JOURNAL_NAME

from .test_cli_output import RUN, seed


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "corral-home"
    home.mkdir()
    seed(home)
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.parametrize(
    "command", [["status"], ["trace"], ["export"], ["journal", "delete"]], ids=" ".join
)
def test_an_agent_id_given_for_a_run_names_the_run_it_belongs_to(
    home: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    assert main([*command, "worker-1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"corral {command[0]}: error: worker-1 is an agent of run {RUN}, not a run; "
        f"give the run's id: {RUN}\n"
    )


def test_a_run_id_that_names_nothing_still_says_no_such_run(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", "run-nope"]) == 2
    assert "no run named 'run-nope'" in capsys.readouterr().err


def test_runs_with_a_status_no_run_has_names_the_statuses_there_are(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "--status", "compleated"]) == 0
    out = capsys.readouterr().out
    assert out == "no runs with status 'compleated'; the runs here are: completed, failed\n"


def test_runs_in_a_fresh_home_says_none_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["runs", "--status", "failed"]) == 0
    assert capsys.readouterr().out == "no runs yet\n"


def test_a_stopped_fanout_shows_its_unfinished_items_as_stopped_and_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def write() -> None:
        async with open_sqlite_store(tmp_path / JOURNAL_NAME) as store:
            record = RunRecord(
                run_id="run-stopped",
                kind="fanout",
                status="interrupted",
                created_at=1_000,
                updated_at=1_000,
                config={},
            )
            await store.create_run(record)
            items = [
                ItemRecord(run_id="run-stopped", index=0, input={}, status="done"),
                ItemRecord(run_id="run-stopped", index=1, input={}, status="running"),
            ]
            await store.put_items("run-stopped", items)

    anyio.run(write)
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["status", "run-stopped"]) == 0
    out = capsys.readouterr().out
    assert "items: 2 (1 done, 1 stopped)" in out
    assert "  #1 stopped" in out and "running" not in out
    assert out.endswith("stopped; carry it on with `corral resume run-stopped`\n")


def test_memory_list_with_memories_off_says_why_there_are_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["memory", "list"]) == 0
    out = capsys.readouterr().out
    assert "runs remember nothing while [memories] enabled is off" in out
    (tmp_path / "config.toml").write_text("[memories]\nenabled = true\n", encoding="utf-8")
    assert main(["memory", "list"]) == 0
    assert capsys.readouterr().out == f"no memories for {tmp_path.resolve()}\n"
