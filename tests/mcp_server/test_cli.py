"""`corral mcp-server`'s options: bad ones are one line and exit 2, and HTTP beyond loopback
needs a token someone configured (none is generated for it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.cli._main import main


@pytest.fixture
def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.delenv("CORRAL_API_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--http", "--port", "70000"], "--port 70000 is not a port"),
        (["--max-running", "0"], "--max-running must be >= 1"),
        (["--http", "--host", "0.0.0.0"], "refusing to listen on 0.0.0.0 without a configured"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    fresh_home: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    code = main(["mcp-server", *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("corral mcp-server: error: ") and said in err
    assert len(err.strip().splitlines()) == 1
    assert not (fresh_home / "api-token").exists()
