"""Determinism: workflow histories recorded from real runs replay against the current code.

The fixtures in `histories/` come from the runs of `test_exec_on_temporal.py` (a run with a
compaction), of `test_same_as_local_on_temporal.py` (a run whose start, prompt and stop hooks
ran) and of the scenarios on Temporal (`tests/scenarios/test_approvals.py`, approvals and
a deadline; `tests/scenarios/test_supervisor.py`, a cancelled supervisor with its workers; their
workflow ids carry the scenario's number). Regenerate them after a deliberate change to the
workflows (and version the change with `workflow.patched` if runs may be in flight):

    CORRAL_RECORD_HISTORIES=1 .venv/bin/pytest tests/temporal/test_exec_on_temporal.py \
        tests/temporal/test_same_as_local_on_temporal.py tests/scenarios \
        -k "temporal and (compacts or approved or cancelling_a_run or start_prompt_and_stop)"
"""

from __future__ import annotations

import json

import pytest

from ._harness import HISTORIES, replay

pytestmark = pytest.mark.anyio

RECORDED = ("approval", "cancelled_supervisor", "compaction", "hooks")


@pytest.mark.parametrize("name", RECORDED)
async def test_a_recorded_run_replays_against_the_current_workflow_code(name: str) -> None:
    recorded: dict[str, object] = json.loads((HISTORIES / f"{name}.json").read_text())
    assert len(recorded) >= 2, "the run's workflow and its agents' workflows"
    await replay({workflow_id: json.dumps(h) for workflow_id, h in recorded.items()})
