"""Read-only fan-out workers, end to end: no `apply_patch` in their requests, and the same
tool list, byte for byte, in every sibling's request (the prompt-cache rule)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_env, run_corral
from .test_fanout import FANOUT, TEMPLATE, word_counter, workspace, write_items

__all__ = ["workspace"]  # the fixture, shared with the fan-out tests

pytestmark = pytest.mark.anyio


async def test_read_only_workers_get_identical_tool_lists_without_apply_patch(
    workspace: Path, tmp_path: Path
) -> None:
    write_items(workspace, "one", "two words", "now three words")
    async with serve_model_server(word_counter) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        args = [*FANOUT, *TEMPLATE, "--sandbox", "read-only", "--run-id", "run-ro"]
        result = await run_corral(args, env=env, cwd=workspace)
        requests = server.requests
    assert result.code == 0, result.stderr
    tool_lists = {json.dumps(request["body"]["tools"]) for request in requests}
    assert len(tool_lists) == 1, "every worker's request carries the same tools"
    names = [tool["name"] for tool in requests[0]["body"]["tools"]]
    assert "apply_patch" not in names
    assert {"read_file", "report_result"} <= set(names)
