"""Trust in a project whose `.corral/config.toml` broke after it was trusted can still be seen
and taken back: `--list` shows it as changed, `--revoke` removes it; trusting the broken file
itself is still refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.cli._main import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "corral-home"
    home.mkdir()
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / ".corral").mkdir()
    (folder / ".corral" / "config.toml").write_text('model = "m"\n')
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.chdir(folder)
    assert main(["trust"]) == 0
    (folder / ".corral" / "config.toml").write_text("model = \n")  # broken since
    return folder


def test_the_listing_shows_a_broken_trusted_project_as_changed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["trust", "--list"]) == 0
    assert capsys.readouterr().out == f"{'changed since trusted':<22} {project.resolve()}\n"


def test_trust_in_a_broken_project_can_be_revoked(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["trust", "--revoke"]) == 0
    assert "is not trusted" in capsys.readouterr().out
    assert main(["trust", "--list"]) == 0
    assert capsys.readouterr().out == ""


def test_trusting_the_broken_file_is_refused_in_one_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["trust"]) == 2
    err = capsys.readouterr().err
    assert "invalid TOML" in err and err.count("\n") == 1
