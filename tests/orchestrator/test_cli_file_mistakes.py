"""Files a person names on the command line and gets wrong: refused in one line, never a traceback.

A fan-out used to run every item and then stop on a traceback when `--out` named a folder or a
path under a file; `corral export --out` did the same. These run the real command in-process
against a fresh home, with no model: each mistake must be caught before a model is needed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.orchestrator.cli._main import main
from corral.orchestrator.fanout._outcome import write_results
from corral.tools import OperationFailed

UNREACHABLE_MODEL = "http://127.0.0.1:9/v1"  # discard port: a run that got this far would fail


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


def fanout_inputs(folder: Path) -> list[str]:
    items = folder / "items.jsonl"
    items.write_text('{"path": "a.py"}\n', encoding="utf-8")
    schema = folder / "schema.json"
    schema.write_text(json.dumps({"type": "object"}), encoding="utf-8")
    return ["--items", str(items), "--template", "Summarise {path}", "--schema", str(schema)]


def a_file(folder: Path) -> Path:
    path = folder / "notes.txt"
    path.write_text("x", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("make_out", "said"),
    [
        (lambda tmp: tmp, "is a folder; name a file in it"),
        (lambda tmp: a_file(tmp) / "results.jsonl", "is a file, not a folder"),
        (lambda tmp: a_file(tmp) / "deeper" / "results.jsonl", "is a file, not a folder"),
    ],
    ids=["a-folder", "under-a-file", "deep-under-a-file"],
)
def test_fanout_refuses_an_out_it_could_not_write_before_running_anything(
    home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make_out: Callable[[Path], Path],
    said: str,
) -> None:
    out = make_out(tmp_path)
    argv = ["fanout", "--base-url", UNREACHABLE_MODEL, "-q", *fanout_inputs(tmp_path)]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert said in err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert not (home / "journal.sqlite").exists(), "no run may start"


def test_a_fanout_out_folder_that_does_not_exist_yet_is_fine(tmp_path: Path) -> None:
    from corral.orchestrator.cli._out import check_out_file

    check_out_file(tmp_path / "new folder" / "results.jsonl")
    check_out_file("-")


def test_results_that_cannot_be_written_say_they_are_kept_in_the_journal(tmp_path: Path) -> None:
    with pytest.raises(OperationFailed) as caught:
        write_results(['{"index": 0}'], a_file(tmp_path) / "r.jsonl", "run-kept")
    assert "cannot write the results to" in str(caught.value)
    assert "`corral export run-kept`" in str(caught.value)


@pytest.mark.parametrize("command", ["review", "triage"])
def test_report_folders_that_are_files_are_refused_in_one_line(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    inputs = fanout_inputs(tmp_path)
    extra = (
        ["--range", "main..HEAD"]
        if command == "review"
        else ["--issues", inputs[1], "--labels", inputs[1]]
    )
    argv = [command, "--base-url", UNREACHABLE_MODEL, *extra, "--out", str(a_file(tmp_path))]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err
    assert "Traceback" not in err


def test_export_to_a_folder_is_refused_in_one_line(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "run-any", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder; name a file in it" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("flag", "role"),
    [("--schema", "schema"), ("--template", "template")],
)
def test_fanout_input_files_that_are_not_utf8_are_refused_in_one_line(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, role: str
) -> None:
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(b'{"caf\xe9": 1}\n')
    argv = ["fanout", "--base-url", UNREACHABLE_MODEL, "-q", *fanout_inputs(tmp_path)]
    at = argv.index(flag) + 1
    argv[at] = str(latin1) if flag == "--schema" else f"@{latin1}"
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{role} file {latin1} is not UTF-8 text" in err
    assert "Traceback" not in err


def test_demo_out_that_is_a_file_is_refused_in_one_line(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = a_file(tmp_path)
    assert main(["demo", "--out", str(notes)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"corral demo: error: --out {notes}: is a file, not a folder; name a folder for the "
        "reports\n"
    )
    assert notes.read_text(encoding="utf-8") == "x"


def test_a_replay_cassette_that_is_not_utf8_is_refused_in_one_line(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = tmp_path / "cassette.jsonl"
    cassette.write_bytes(b"\xff\xfe{}\n")
    assert main(["model-server", "--port", "0", "--replay", str(cassette)]) == 2
    err = capsys.readouterr().err
    assert f"--replay cassette {cassette} is not UTF-8 text" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "error",
    [
        IsADirectoryError(21, "Is a directory", "/srv/out"),
        PermissionError(13, "Permission denied", "/srv/.out.partial", "/srv/out"),
        ExceptionGroup("task group", [FileNotFoundError(2, "No such file", "/srv/x")]),
    ],
    ids=["folder", "rename", "in-a-task-group"],
)
def test_a_file_error_no_command_worded_is_one_line_naming_the_path(error: Exception) -> None:
    from corral.orchestrator.cli._main import _corral_errors

    errors = _corral_errors(error)
    assert errors is not None and len(errors) == 1
    text = str(errors[0])
    assert "/srv/" in text and "\n" not in text
    assert "check that the path exists and that you may use it" in text
    assert errors[0].exit_code == 1


def test_a_closed_pipe_is_still_left_to_end_quietly() -> None:
    from corral.orchestrator.cli._main import _corral_errors

    assert _corral_errors(BrokenPipeError(32, "Broken pipe")) is None


def test_fanout_items_dash_reads_standard_input(home: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    schema = tmp_path / "schema.json"
    schema.write_text("{}", encoding="utf-8")
    argv = [sys.executable, "-m", "corral", "fanout", "--base-url", UNREACHABLE_MODEL]
    argv += ["--items", "-", "--template", "{missing}", "--schema", str(schema)]
    done = subprocess.run(
        argv, input='{"path": "a.py"}\n', capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, done.stderr
    assert "item 0 (/dev/stdin line 1) has no field 'missing'" in done.stderr
