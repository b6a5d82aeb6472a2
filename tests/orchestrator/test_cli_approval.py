"""The terminal approver against a real pseudo-terminal: y/N, typeahead, deadline, no TTY."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from corral.orchestrator.cli._approval import TerminalApprover
from corral.tools._approval import ApprovalDecision, ApprovalKind, ApprovalRequest

pytestmark = pytest.mark.anyio

REQUEST = ApprovalRequest(
    tool="shell",
    command="touch /etc/x",
    cwd=Path("/work"),
    reason="needs to write outside?",
    kind=ApprovalKind.ESCALATE,
)


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """A pseudo-terminal: (the side a person types into, the side the approver reads)."""
    person, tty = os.openpty()
    yield person, tty
    os.close(person)
    os.close(tty)


async def read_until(fd: int, marker: bytes) -> bytes:
    seen = b""
    with anyio.fail_after(10):
        while marker not in seen:
            await anyio.wait_readable(fd)
            seen += os.read(fd, 4096)
    return seen


async def ask_and_answer(
    terminal: tuple[int, int], answer: bytes, *, typed_before: bytes = b""
) -> tuple[ApprovalDecision, str]:
    person, tty = terminal
    screen = os.fdopen(os.dup(tty), "w", encoding="utf-8")
    approver = TerminalApprover(input_fd=tty, output=screen, answer_within=10)
    if typed_before:
        os.write(person, typed_before)
    decisions: list[ApprovalDecision] = []

    async def ask() -> None:
        decisions.append(await approver.request(REQUEST))

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        shown = await read_until(person, b"[y/N]")
        os.write(person, answer)
    screen.close()
    return decisions[0], shown.decode()


async def test_yes_at_the_terminal_approves(terminal: tuple[int, int]) -> None:
    decision, shown = await ask_and_answer(terminal, b"y\n")
    assert decision == ApprovalDecision.approve("approved at the terminal")
    assert "shell wants to run outside the sandbox:" in shown
    assert "touch /etc/x" in shown
    assert "because: needs to write outside?" in shown


async def test_anything_but_yes_denies(terminal: tuple[int, int]) -> None:
    decision, _ = await ask_and_answer(terminal, b"sure\n")
    assert decision == ApprovalDecision.deny("denied at the terminal")


async def test_input_typed_before_the_question_cannot_answer_it(
    terminal: tuple[int, int],
) -> None:
    decision, _ = await ask_and_answer(terminal, b"\n", typed_before=b"y\n")
    assert not decision.approved


async def test_silence_past_the_deadline_denies(terminal: tuple[int, int]) -> None:
    _, tty = terminal
    screen = io.StringIO()
    approver = TerminalApprover(input_fd=tty, output=screen, answer_within=0.2)
    with anyio.fail_after(10):
        decision = await approver.request(REQUEST)
    assert decision == ApprovalDecision.deny("no answer at the terminal within 0.2 s")
    assert screen.getvalue().endswith("(no answer: denied)\n")


async def test_without_a_terminal_it_denies_without_asking() -> None:
    read_end, write_end = os.pipe()
    screen = io.StringIO()
    try:
        approver = TerminalApprover(input_fd=read_end, output=screen)
        decision = await approver.request(REQUEST)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert decision == ApprovalDecision.deny("nobody to ask: stdin is not a terminal")
    assert screen.getvalue() == ""
