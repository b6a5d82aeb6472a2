"""What the progress output does on terminals that cannot take escape sequences."""

from __future__ import annotations

import io

import pytest

from corral.orchestrator.cli._progress import LiveProgress, progress_mode


class Terminal(io.StringIO):
    """A stream that says it is a terminal, keeping what was written."""

    def isatty(self) -> bool:
        return True


def test_a_dumb_terminal_gets_plain_lines_without_colour_or_erasing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("NO_COLOR", raising=False)
    screen = Terminal()
    assert progress_mode(screen, quiet=False) == "lines"
    progress = LiveProgress("fanout", out=screen)
    progress.started("run-1", 2, 2)
    progress.close()
    assert "\x1b" not in screen.getvalue()
    assert "corral fanout: run run-1" in screen.getvalue()


def test_an_ordinary_terminal_still_gets_the_live_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    assert progress_mode(Terminal(), quiet=False) == "live"
