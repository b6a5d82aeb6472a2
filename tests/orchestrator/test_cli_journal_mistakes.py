"""Reading the journal with the wrong word: an agent's id where a run's is wanted, a status no
run has. Each answer says what was wrong and what to give instead, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.cli._main import main

from .test_cli_output import RUN, seed


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "corral-home"
    home.mkdir()
    seed(home)
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.parametrize("command", ["status", "trace", "export"])
def test_an_agent_id_given_for_a_run_names_the_run_it_belongs_to(
    home: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert main([command, "worker-1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"corral {command}: error: worker-1 is an agent of run {RUN}, not a run; "
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
