"""`corral exec` mistakes made before any run can start: each is one line, exit 2, and no run id
is printed for a run the journal never got (`corral status` on it said no such run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.cli._main import main

ENDPOINT_VARIABLES = ("OPENAI_API_KEY", "CORRAL_API_KEY", "OPENAI_BASE_URL", "CORRAL_BASE_URL")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["exec", "say hi"], "no API key for the model endpoint"),
        (["exec", "--base-url", "127.0.0.1:8000/v1", "say hi"], "is not an http(s) URL"),
        (["exec", "--base-url", "http://127.0.0.1:9/v1", "  "], "TASK is empty"),
    ],
    ids=["no-key", "url-without-scheme", "empty-task"],
)
def test_a_run_that_cannot_start_prints_no_run_id(
    home: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err
    assert "corral status" not in err, "no id of a run that was never journaled"
    assert err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("word", "hint"),
    [
        ("exce", "did you mean `corral exec`? "),
        ("stauts", "did you mean `corral status`? "),
        ("frobnicate", ""),
    ],
)
def test_a_misspelt_command_is_named_with_the_nearest_real_one(
    capsys: pytest.CaptureFixture[str], word: str, hint: str
) -> None:
    assert main([word, "x"]) == 2
    assert capsys.readouterr().err == (
        f"corral: error: no command {word!r}; {hint}`corral --help` lists the commands\n"
    )


def test_resume_takes_its_message_after_the_flags_as_the_docs_write_it() -> None:
    from corral.orchestrator.cli._main import _take_late_positional, build_parser

    argv = ["resume", "agent-1", "--base-url", "http://127.0.0.1:9/v1", "and now the tests"]
    parser = build_parser(argv)
    args, extras = parser.parse_known_args(argv)
    _take_late_positional(parser, args, extras)
    assert (args.target, args.message) == ("agent-1", "and now the tests")


@pytest.mark.parametrize(
    "argv",
    [
        ["resume", "agent-1", "--base-url", "http://127.0.0.1:9/v1", "one", "two"],
        ["status", "run-1", "extra"],
    ],
)
def test_words_left_over_are_still_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["runs"], ["exec", "say hi"], ["doctor"]])
def test_a_corral_home_that_is_a_file_is_named_as_the_setting_to_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("x", encoding="utf-8")
    monkeypatch.setenv("CORRAL_HOME", str(notes))
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    assert capsys.readouterr().err == (
        f"corral {command[0]}: error: CORRAL_HOME={notes} is a file, not a folder; point it at "
        "a folder (it is made if missing), or unset it for ~/.corral\n"
    )
