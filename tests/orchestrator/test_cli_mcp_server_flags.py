"""`corral mcp-server` flags a person gets wrong: `--port` without `--http` is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.cli._main import main


@pytest.mark.parametrize("flags", [["--port", "8421"], ["--host", "0.0.0.0"]])
def test_listen_flags_without_http_are_refused_instead_of_serving_stdio(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["mcp-server", *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "corral mcp-server: error: --host and --port are for HTTP: add --http to listen on "
        "them, or drop them to serve stdio\n"
    )
