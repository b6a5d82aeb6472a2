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
from tests._terminal import HOSTILE_TEXT, acting

pytestmark = pytest.mark.hostile

HOSTILE = HOSTILE_TEXT


def assert_one_line_each(out: str, lines: int) -> None:
    assert out.count("\n") == lines
    raw = acting(out, allowed="\n")
    assert not raw, f"written raw: {raw}"


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
