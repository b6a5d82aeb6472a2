"""A run of many agents does not keep every finished one whole: once an agent's loop has ended,
its conversation and tools are let go; what callers read of it, and the journal, stay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_supervisor import open_supervised_run, run_to_end

pytestmark = pytest.mark.anyio


def answers_at_once(request: dict[str, Any]) -> Any:
    return "all done"


async def test_a_finished_agent_lets_go_of_its_history_and_keeps_its_outcome(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    async with open_supervised_run(answers_at_once, workspace) as (runtime, _):
        root = await run_to_end(runtime, workspace, "say you are done")

        assert (str(root.status), root.final_message) == ("completed", "all done")
        assert root.runner.core.history == []
        assert len(root.runner.registry) == 0
        assert root.runner.core.total_usage.total_tokens > 0, "its totals stay"
        kinds = [e.kind for e in await runtime.store.events(root.agent_id)]
        assert "model_completed" in kinds, "the journal keeps everything"
