"""A model's tool call whose arguments nest deeper than `json` reads (`[[[[...` or
`{"a":{"a":...`, at the top or inside a field): the call fails as invalid arguments the model
can fix, logged as nothing worse, and what reads the arguments elsewhere (the memory
transcript's file list) skips them instead of raising."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from corral.agents._items import FunctionCall
from corral.orchestrator.memory._transcript import involved_files
from corral.tools import PermissionProfile, ToolCall, ToolContext, ToolRegistry
from corral.tools._file_tools import file_tools

pytestmark = pytest.mark.hostile

DEPTH = 100_000
DEEP = {
    "arrays at the top": "[" * DEPTH + "]" * DEPTH,
    "objects at the top": '{"a":' * DEPTH + "1" + "}" * DEPTH,
    "arrays in a field": '{"path":' + "[" * DEPTH + "]" * DEPTH + "}",
    "unterminated arrays in a field": '{"path":"x","limit":' + "[" * DEPTH,
}


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["read_file", "apply_patch", "grep"])
@pytest.mark.parametrize("shape", sorted(DEEP))
async def test_arguments_nested_past_reading_are_invalid_arguments(
    tool: str, shape: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = ToolContext(
        cwd=tmp_path, profile=PermissionProfile.for_workspace("workspace-write", tmp_path)
    )
    with caplog.at_level(logging.ERROR):
        out = await ToolRegistry(file_tools()).dispatch(ToolCall("c1", tool, DEEP[shape]), ctx)
    assert not out.success
    assert out.text.startswith(f"invalid arguments for {tool}") and "Recursion" not in out.text
    assert not [r for r in caplog.records if r.exc_info]


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_the_memory_transcript_skips_arguments_nested_past_reading(shape: str) -> None:
    call = FunctionCall(call_id="c1", name="read_file", arguments=DEEP[shape])
    assert involved_files([call]) == []
