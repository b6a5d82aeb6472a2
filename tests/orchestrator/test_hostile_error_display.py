"""Attacks on the person reading corral's error line, through names a repository chose.

Errors name paths in the repository (its folders, its AGENTS.md), ids from a journal someone
gave you, and the like. A folder name may hold escape sequences (git stores any byte but NUL
and `/`): printed as they are, they retitle the terminal, erase the line or reorder it. The
error line and every warning spell them out instead, as an approval question does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._journal import given_journal

from ..e2e._cli import corral_env, run_corral

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

NAMES = {
    "osc-title": ("sub\x1b]0;owned\x07x", "\\x1b]0;owned\\x07"),
    "erase-line": ("sub\x1b[2K\rok", "\\x1b[2K\\r"),
    "bidi-override": ("sub\u202etxt.exe", "\\u202e"),
    "c1-csi": ("sub\x9b2Jx", "\\x9b"),
}


@pytest.mark.parametrize(("name", "spelled"), list(NAMES.values()), ids=list(NAMES))
async def test_an_error_naming_a_repository_folder_spells_out_its_control_characters(
    tmp_path: Path, name: str, spelled: str
) -> None:
    home, folder = tmp_path / "home", tmp_path / name
    home.mkdir()
    folder.mkdir()
    (folder / "AGENTS.md").write_bytes(b"binary\x00file")  # refused before any model call
    env = corral_env(home, "http://127.0.0.1:9/v1", OPENAI_API_KEY="unused")
    done = await run_corral(["exec", "hello"], env=env, cwd=folder)
    assert done.code != 0
    (line,) = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert spelled in line and "AGENTS.md" in line
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c == "\u202e" for c in line)


@pytest.mark.parametrize(("name", "spelled"), list(NAMES.values()), ids=list(NAMES))
async def test_a_warning_naming_a_repository_folder_spells_out_its_control_characters(
    tmp_path: Path, name: str, spelled: str
) -> None:
    home, folder = tmp_path / "home", tmp_path / name
    home.mkdir()
    (folder / ".corral").mkdir(parents=True)
    (folder / ".corral" / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    done = await run_corral(["status", "run-nope"], env=corral_env(home), cwd=folder)
    (line,) = [line for line in done.stderr.splitlines() if "WARNING" in line]
    assert spelled in line and "ignored sandbox_mode" in line
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c == "\u202e" for c in line)


async def test_runs_and_status_spell_out_what_a_task_or_an_agent_error_carries(
    tmp_path: Path,
) -> None:
    home, folder = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    folder.mkdir()
    task, error = "fix it\x1b]0;owned\x07 now", "tool said \x1b[2K\rall good"
    await given_journal(home / "journal.sqlite", "run-1", task=task, agent_error=error)
    env = corral_env(home)
    listed = await run_corral(["runs"], env=env, cwd=folder)
    shown = await run_corral(["status", "run-1"], env=env, cwd=folder)
    assert "\\x1b]0;owned\\x07" in listed.stdout and "\\x1b[2K\\r" in shown.stdout
    for out in (listed.stdout, shown.stdout):
        assert not any(ord(c) < 0x20 and c != "\n" for c in out)
