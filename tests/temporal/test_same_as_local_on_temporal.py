"""What the local executor does for every agent, done the same on Temporal through the same code:
a tool's output journaled as the model saw it, capped, with its size and hash; the user's
lifecycle hooks (`docs/hooks.md`) fired at an agent's start, prompts and end.

Each test runs a time-skipping test server, a corral worker in this process and the scripted
model server, all on loopback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import CorralConfig, open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, RunSetup, SingleOutcome
from corral.orchestrator.temporal import ActivityPolicy, TemporalExecutor, TemporalSettings

from ._harness import WAIT, call, in_process_worker, outputs, time_skipping

pytestmark = pytest.mark.anyio

POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
CAP = 2048
FLOOD = 60_000


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


async def run_on_temporal(
    settings: dict[str, Any], script: Any, workspace: Path, home: Path, run_id: str
) -> tuple[SingleOutcome, list[dict[str, Any]]]:
    """Run one exec agent under `settings` on Temporal; its outcome and the requests the model
    was sent (normalised)."""
    async with serve_model_server(script) as model, time_skipping() as env:
        config = CorralConfig.model_validate({"home": home, "base_url": model.base_url, **settings})
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config, ExecJob(task="go", cwd=workspace, run_id=run_id), RunSetup(env={})
                )
        return outcome, [r["normalised"] for r in model.requests]


def flood_then_answer(request: dict[str, Any]) -> Any:
    if "flood" in outputs(request):
        return "done"
    return [call("flood", "shell", {"command": f"head -c {FLOOD} /dev/zero | tr '\\0' x"})]


async def test_a_large_tool_output_is_journaled_capped_with_its_size_and_hash_on_temporal(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    settings = {"journal": {"max_tool_output_bytes": CAP}, "tool_output_token_limit": 100_000}
    outcome, requests = await run_on_temporal(
        settings, flood_then_answer, workspace, home, "run-flood"
    )
    assert outcome.finish.message == "done"
    async with open_sqlite_store(home / "journal.sqlite") as store:
        results = [e.payload for e in await store.events(outcome.agent_id)]
        ledger = await store.ledger(outcome.agent_id)
    (result,) = [p for p in results if p["kind"] == "tool_result"]
    journaled = result["output"]
    assert len(journaled.encode()) <= CAP, "cut to [journal] max_tool_output_bytes"
    assert journaled == outputs(requests[-1])["flood"], "journaled as the model saw it"
    whole = result["total_bytes"]
    assert whole is not None and whole > 8 * CAP, "the size is of the whole output"
    assert result["sha256"] is not None and len(result["sha256"]) == 64
    assert [e.output for e in ledger] == [journaled], "the ledger keeps no more than the journal"
