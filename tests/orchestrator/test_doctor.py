"""`corral doctor`: a whole journal passes; a page overwritten mid-file is found, with advice."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from corral.agents._store._schema import connect
from corral.orchestrator.cli._main import main

PAGE = 4096
EVENTS = 400


def write_journal(path: Path) -> None:
    conn = connect(path)
    try:
        conn.execute("INSERT INTO runs VALUES ('run-1', 'exec', 'done', 1, 2, '{}', '{}')")
        conn.execute(
            "INSERT INTO agents (agent_id, run_id, nickname, role, status, created_at, updated_at,"
            " base_instructions, config, usage, cost_usd, depth)"
            " VALUES ('a', 'run-1', 'root', 'general', 'completed', 1, 2, 'x', '{}', '{}', 0, 0)"
        )
        payload = json.dumps({"text": "word " * 60})
        for seq in range(1, EVENTS + 1):
            conn.execute(
                "INSERT INTO events (agent_id, seq, kind, payload, at, run_id, run_seq)"
                " VALUES ('a', ?, 'note', ?, ?, 'run-1', ?)",
                (seq, payload, float(seq), seq),
            )
    finally:
        conn.close()


def overwrite_middle_page(path: Path) -> None:
    pages = path.stat().st_size // PAGE
    assert pages > 10, "the journal spans enough pages to damage one in the middle"
    with path.open("r+b") as file:
        file.seek((pages // 2) * PAGE)
        file.write(b"\xab" * PAGE)


def test_a_whole_journal_is_reported_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "journal.sqlite"
    write_journal(journal)
    assert main(["doctor", "--journal", str(journal)]) == 0
    assert capsys.readouterr().out == f"{journal}: ok\n"


def test_a_page_overwritten_in_the_middle_is_found_with_how_to_recover(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "journal.sqlite"
    write_journal(journal)
    damaged = tmp_path / "copy.sqlite"
    shutil.copyfile(journal, damaged)
    overwrite_middle_page(damaged)
    before = damaged.read_bytes()
    assert main(["doctor", "--journal", str(damaged)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{damaged}: DAMAGED\n  problem: ")
    assert f'sqlite3 {damaged} ".recover" | sqlite3 {tmp_path / "copy.recovered.sqlite"}' in out
    assert "restore it from a copy" in out
    assert damaged.read_bytes() == before, "the check wrote nothing"


def test_doctor_checks_the_homes_journal_and_service_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write_journal(home / "journal.sqlite")
    (home / "service.sqlite").write_bytes(b"not a database at all" * 300)
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert f"{home / 'journal.sqlite'}: ok\n" in out
    assert f"{home / 'service.sqlite'}: DAMAGED\n" in out


def test_a_journal_path_that_names_no_file_is_the_callers_mistake_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.sqlite"
    assert main(["doctor", "--journal", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "no journal file at" in err and "--journal" in err and "Traceback" not in err
    assert not missing.exists()


def test_a_fresh_home_has_no_journal_yet_and_that_is_not_damage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert f"{home / 'journal.sqlite'}: not created yet" in out and "DAMAGED" not in out
    assert not (home / "journal.sqlite").exists()


@pytest.mark.parametrize("content", [b"print('hi')\n", "caf\u00e9 notes\n".encode()])
def test_a_journal_path_that_names_a_file_of_another_kind_is_refused_without_recovery_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    notes = tmp_path / "policy.py"
    notes.write_bytes(content)
    assert main(["doctor", "--journal", str(notes)]) == 2
    captured = capsys.readouterr()
    assert f"{notes} is not an SQLite database" in captured.err
    assert "mv " not in captured.out + captured.err
    assert notes.read_bytes() == content
