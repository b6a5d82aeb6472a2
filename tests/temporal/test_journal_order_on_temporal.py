"""The journal an agent's workflow writes stays gap-free whatever order its activities run in.

A background summary (`PrepareCompaction`) runs beside the agent's next steps. Events the
workflow held for the journal (a PreCompact hook's note) once rode with the summary's activity,
numbered before the next step's: when the next step's activity ran first (a loaded machine), its
append was refused as leaving a gap ("holds events up to seq 19; the batch starts at 21").
Here the summary's activity is held until a tool batch has run, every time, so the order that
was a matter of luck is the order the test sees.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker

from corral.agents import CorralConfig
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, RunSetup
from corral.orchestrator.temporal import ActivityPolicy, TemporalExecutor, TemporalSettings
from corral.orchestrator.temporal._activities import CorralActivities
from corral.orchestrator.temporal._heartbeat import heartbeating
from corral.orchestrator.temporal._services import open_worker_services
from corral.orchestrator.temporal._wire import (
    ModelCallInput,
    ModelCallOutput,
    ToolBatchInput,
    ToolBatchOutput,
    host_queue,
)
from corral.orchestrator.temporal._worker import WORKFLOWS, workflow_runner

from ._harness import HOST, WAIT, time_skipping
from .test_same_as_local_on_temporal import (
    APPEND,
    grow_until_summarised,
    hook,
    journal_of,
)

pytestmark = pytest.mark.anyio

POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
HOLD = WAIT / 3
"""How long a summary waits for a tool batch at most: a core that waits for its summary
before any tool runs must still get it."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


class SummariesAfterTools(CorralActivities):
    """The real activities, except that the first background summary starts only after a tool
    batch has run (or `HOLD` has passed)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tools_ran = asyncio.Event()
        self.held = False

    @activity.defn(name="corral.call_model")
    async def call_model(self, call: ModelCallInput) -> ModelCallOutput:
        if call.summary and not self.held:
            self.held = True
            async with heartbeating():
                with anyio.move_on_after(HOLD):
                    await self.tools_ran.wait()
        return await super().call_model(call)

    @activity.defn(name="corral.run_tools")
    async def run_tools(self, batch: ToolBatchInput) -> ToolBatchOutput:
        try:
            return await super().run_tools(batch)
        finally:
            self.tools_ran.set()


@asynccontextmanager
async def worker_of(
    kind: type[CorralActivities], client: Client, config: CorralConfig
) -> AsyncIterator[None]:
    """A corral worker in this process whose activities are `kind`'s."""
    async with open_worker_services(config, host=HOST, env={}) as services:
        activities = kind(services)
        workers = [
            Worker(
                client,
                task_queue=queue,
                workflows=list(WORKFLOWS) if shared else [],
                activities=hosted,
                workflow_runner=workflow_runner(),
                graceful_shutdown_timeout=timedelta(seconds=1),
            )
            for queue, hosted, shared in (
                (TemporalSettings(address="test").task_queue, activities.shared, True),
                (host_queue(HOST), activities.on_host, False),
            )
        ]
        async with workers[0], workers[1]:
            yield


async def test_a_background_summary_that_runs_late_leaves_no_gap_in_the_journal(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    hooks = {**hook("PreCompact", APPEND % "c.jsonl"), **hook("PostCompact", APPEND % "c.jsonl")}
    settings = {"hooks": hooks, "model_auto_compact_token_limit": 9000}
    async with serve_model_server(grow_until_summarised) as model, time_skipping() as env:
        config = CorralConfig.model_validate({"home": home, "base_url": model.base_url, **settings})
        async with worker_of(SummariesAfterTools, env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config, ExecJob(task="go", cwd=workspace, run_id="run-late"), RunSetup(env={})
                )
    assert outcome.finish.error is None, outcome.finish.error
    assert outcome.finish.message == "finished after compacting"
    journal = await journal_of(home, outcome.agent_id)
    ran = [e["event"] for e in journal if e["kind"] == "hook_ran"]
    assert ran[:2] == ["PreCompact", "PostCompact"], "the held notes were journaled"


class ResultLostOnce(CorralActivities):
    """The real activities, except that the first model call's result is lost after its
    events were journaled (as when a worker dies before the server hears of it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lost = False

    @activity.defn(name="corral.call_model")
    async def call_model(self, call: ModelCallInput) -> ModelCallOutput:
        out = await super().call_model(call)
        if not self.lost:
            self.lost = True
            raise RuntimeError("the worker died before the result reached the server")
        return out


def answers_differently_each_time() -> Any:
    asked = 0

    def answer(request: dict[str, Any]) -> Any:
        nonlocal asked
        asked += 1
        return f"answer {asked}"

    return answer


async def test_a_model_call_retried_after_its_response_was_journaled_answers_that_response(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    async with (
        serve_model_server(answers_differently_each_time()) as model,
        time_skipping() as env,
    ):
        config = CorralConfig.model_validate({"home": home, "base_url": model.base_url})
        async with worker_of(ResultLostOnce, env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            with anyio.fail_after(WAIT):
                outcome = await ex.run_single(
                    config, ExecJob(task="go", cwd=workspace, run_id="run-lost"), RunSetup(env={})
                )
        asked = len(model.requests)
    assert outcome.finish.error is None, outcome.finish.error
    assert outcome.finish.message == "answer 1", "the journaled response, not a second one"
    assert asked == 1, "the model is not asked again for a response the journal holds"
    journal = await journal_of(home, outcome.agent_id)
    assert [e["kind"] for e in journal].count("model_completed") == 1
