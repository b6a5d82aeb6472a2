"""`corral exec`'s answer and failure line, against a model that writes terminal escapes: on a
terminal every character it would act on (a retitle, a clipboard write, a cleared screen, a
bidi override) is spelled out; piped to a file or program the answer is written as it is,
since it is the command's output."""

from __future__ import annotations

import io

import pytest

from corral.agents import AgentStatus, Finish
from corral.orchestrator.cli._exec import report
from corral.orchestrator.runs._single import SingleOutcome
from tests._terminal import HOSTILE_TEXT, acting

pytestmark = pytest.mark.hostile

HOSTILE = HOSTILE_TEXT


class Terminal(io.StringIO):
    """A stdout that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def outcome(finish: Finish) -> SingleOutcome:
    return SingleOutcome(run_id="run-1", agent_id="agent-1", finish=finish, journal="j.sqlite")


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_an_answer_shown_on_a_terminal_has_its_escapes_spelled_out(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    answer = Finish(status=AgentStatus.COMPLETED, message=f"line one\n\tindented {text}")
    assert report(outcome(answer), json_mode=False, command="exec") == 0
    written = terminal.getvalue()
    raw = acting(written, allowed="\n\t")
    assert not raw, f"written raw: {raw}"
    assert written.startswith("line one\n\tindented "), "line breaks and tabs are kept"


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_an_answer_piped_elsewhere_is_written_as_the_model_wrote_it(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    piped = io.StringIO()
    monkeypatch.setattr("sys.stdout", piped)
    answer = Finish(status=AgentStatus.COMPLETED, message=f"result {text}")
    assert report(outcome(answer), json_mode=False, command="exec") == 0
    assert piped.getvalue() == f"result {text}\n"


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_failure_reason_is_spelled_out_on_stderr(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    failed = Finish(status=AgentStatus.FAILED, error=f"the model said {text}")
    assert report(outcome(failed), json_mode=False, command="exec") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not acting(err, allowed="\n")
