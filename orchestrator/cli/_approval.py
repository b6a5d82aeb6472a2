"""The CLI's approver: asks the person at the terminal, y/N, and denies on silence.

Questions are asked one at a time, input typed before a question is discarded (so an early
keystroke cannot approve a later command), and nothing is asked when stdin is not a terminal:
a batch run or a pipe gets a denial at once. Which requests exist is `tools`' business.
"""

from __future__ import annotations

import os
import sys
import termios
from typing import TextIO

import anyio

from corral.tools import ApprovalDecision, ApprovalRequest

# How long the person has to answer one question.
ANSWER_TIMEOUT = 60.0

_KIND_TEXT = {
    "escalate": "run outside the sandbox",
    "untrusted_command": "run a command that is not known to be read-only",
    "retry_unsandboxed": "run again outside the sandbox",
    "mcp_tool": "call an MCP tool",
}


class TerminalApprover:
    """Asks on the terminal: `input_fd` is read (default stdin), `output` shows the question."""

    def __init__(
        self,
        *,
        input_fd: int | None = None,
        output: TextIO | None = None,
        answer_within: float = ANSWER_TIMEOUT,
    ) -> None:
        self._input_fd = input_fd
        self._output = output
        self._answer_within = answer_within
        self._lock = anyio.Lock()

    async def request(self, req: ApprovalRequest) -> ApprovalDecision:
        fd = self._terminal_fd()
        if fd is None:
            return ApprovalDecision.deny("nobody to ask: stdin is not a terminal")
        async with self._lock:
            termios.tcflush(fd, termios.TCIFLUSH)
            self._say(_question(req, self._answer_within))
            answer = await self._read_line(fd)
        if answer is None:
            self._say("\n(no answer: denied)\n")
            return ApprovalDecision.deny(
                f"no answer at the terminal within {self._answer_within:g} s"
            )
        if answer.strip().lower() in ("y", "yes"):
            return ApprovalDecision.approve("approved at the terminal")
        return ApprovalDecision.deny("denied at the terminal")

    def _terminal_fd(self) -> int | None:
        try:
            fd = sys.stdin.fileno() if self._input_fd is None else self._input_fd
        except (AttributeError, ValueError, OSError):
            return None
        return fd if os.isatty(fd) else None

    def _say(self, text: str) -> None:
        stream = self._output if self._output is not None else sys.stderr
        stream.write(text)
        stream.flush()

    async def _read_line(self, fd: int) -> str | None:
        """One line from the terminal; None past the deadline. End of input reads as no."""
        data = b""
        with anyio.move_on_after(self._answer_within):
            while not data.endswith(b"\n"):
                await anyio.wait_readable(fd)
                chunk = os.read(fd, 1024)
                if not chunk:
                    break
                data += chunk
            return data.decode("utf-8", errors="replace")
        return None


def _question(req: ApprovalRequest, answer_within: float) -> str:
    what = _KIND_TEXT.get(str(req.kind), str(req.kind))
    return (
        f"\n{shown(req.tool)} wants to {what}:\n"
        f"  {shown(req.command)}\n"
        f"  in {shown(str(req.cwd))}\n"
        f"  because: {shown(req.reason)}\n"
        f"Allow? [y/N] (no answer in {answer_within:g} s means no) "
    )


# Characters that move the cursor, recolour, retitle or reorder what the terminal shows.
_HIDING = {*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def shown(text: str) -> str:
    """`text` as the person must see it: every character a terminal would act on instead of
    printing (escape sequences, carriage returns, newlines, bidi overrides) spelled out, so a
    model-written command cannot disguise itself as a harmless one on the screen."""
    return "".join(_escape(c) if ord(c) in _HIDING else c for c in text)


def shown_lines(text: str) -> str:
    """`text` for a terminal as `shown` spells it, but keeping its line breaks: for output of
    several lines (an error, a warning, a status) that names paths, ids and model text."""
    return "\n".join(shown(line) for line in text.split("\n"))


def shown_answer(text: str) -> str:
    """A model's answer for a terminal: `shown_lines`, keeping its tabs too (code indents with
    them). Piped elsewhere, an answer is written as it is: it is the command's output."""
    return "\t".join(shown_lines(part) for part in text.split("\t"))


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
