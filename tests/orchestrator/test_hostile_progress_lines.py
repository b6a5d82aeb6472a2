"""The progress lines `corral exec` and `corral resume` write while agents work, against what a
model or a file controls: a tool call's name and arguments, the first line of its output (a
file's content, a command's output), a spawned agent's name. Escape sequences, carriage
returns, newlines and bidi overrides are spelled out: one line per call, as it really is."""

from __future__ import annotations

import io

import pytest

from corral.agents import FunctionCall
from corral.orchestrator.cli._hooks import ProgressHooks
from corral.tools import ToolOutput

pytestmark = pytest.mark.hostile

HOSTILE = {
    "osc-title": "\x1b]0;owned\x07",
    "erase-line": "\x1b[2K\rall good",
    "fake-line": "ok\n  <- shell ok: nothing to see",
    "bidi-override": "\u202etxt.exe",
    "c1-csi": "\x9b2J",
    "clipboard": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "backspaces": "rm -rf ~\b\b\b\b\b\b\b\bls",
}
_ACTS = {*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def assert_one_line_each(out: str, lines: int) -> None:
    assert out.count("\n") == lines
    acting = sorted({f"U+{ord(c):04X}" for c in out.replace("\n", "") if ord(c) in _ACTS})
    assert not acting, f"written raw: {acting}"


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_calls_name_arguments_and_output_are_spelled_out(text: str) -> None:
    out = io.StringIO()
    hooks = ProgressHooks(out)
    hooks.agent_started("agent-1", None, f"root{text}")
    hooks.agent_started("agent-2", "agent-1", f"worker{text}")
    call = FunctionCall(call_id="c1", name=f"shell{text}", arguments=f'{{"cmd": "{text}"}}')

    hooks.tool_call_started("agent-2", call)
    hooks.tool_call_ended("agent-2", call, ToolOutput(text=f"first {text} line", success=True))

    assert_one_line_each(out.getvalue(), 2)
