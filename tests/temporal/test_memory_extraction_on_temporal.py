"""A completed exec run on Temporal extracts its memories once, through an activity on its
root's host, and a completed fan-out once, on a host of its workers; a read-only run extracts
nothing; the run's history (with the new step, versioned
by `workflow.patched`) replays. A time-skipping test server, a corral worker in this process
and the scripted model server, all on loopback."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import CorralConfig
from corral.orchestrator.memory import EXTRACTION, open_sqlite_memories, project_of
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import ExecJob, FanoutJob, RunSetup
from corral.orchestrator.temporal import ActivityPolicy, TemporalExecutor, TemporalSettings
from tests._scripted import call, outputs, texts
from tests.memory._scripted import FACT, LearnsAFact, memory_fragments, purpose

from ._harness import WAIT, fetch_histories, in_process_worker, replay, time_skipping

pytestmark = pytest.mark.anyio

POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "Makefile").write_text("check:\n\tpython -m pytest -q\n")
    return root


async def run_on_temporal(
    tmp_path: Path, workspace: Path, policy: LearnsAFact, runs: list[str], **settings: object
) -> list[str]:
    """Run each of `runs` (ids) in turn; answer the agents' requests' memory fragments."""
    async with serve_model_server(policy) as model, time_skipping() as env:
        config = CorralConfig(
            home=tmp_path / "home",
            base_url=model.base_url,
            memories={"enabled": True},
            **settings,
        )
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            for run_id in runs:
                job = ExecJob(task="How are the tests run?", cwd=workspace, run_id=run_id)
                with anyio.fail_after(WAIT):
                    outcome = await ex.run_single(config, job, RunSetup(env={}))
                assert outcome.finish.status == "completed", outcome.finish
            await replay(await fetch_histories(env.client, runs[0]))
        requests = [r["normalised"] for r in model.requests]
    return [f for r in requests if purpose(r) is None for f in memory_fragments(r)]


async def test_a_completed_run_on_temporal_extracts_once_and_a_later_one_recalls_it(
    tmp_path: Path, workspace: Path
) -> None:
    policy = LearnsAFact()
    fragments = await run_on_temporal(tmp_path, workspace, policy, ["run-a", "run-b"])
    assert len(policy.extractions) == 2  # one per run, none per turn or per retry
    async with open_sqlite_memories(tmp_path / "home" / "journal.sqlite") as store:
        kept = await store.memories(project_of(workspace))
    assert sorted(m.run_id for m in kept) == ["run-a", "run-b"]
    assert all(m.text == FACT and m.files == ("Makefile",) for m in kept)
    assert any(FACT in f for f in fragments), "run-b recalled what run-a learned"


async def test_a_read_only_run_on_temporal_extracts_nothing(
    tmp_path: Path, workspace: Path
) -> None:
    policy = LearnsAFact()
    await run_on_temporal(tmp_path, workspace, policy, ["run-ro"], sandbox_mode="read-only")
    assert policy.extractions == []


@dataclass
class FanoutLearns:
    """Each worker reads `Makefile`, reports its item and finishes; extraction answers FACT."""

    extractions: list[str] = field(default_factory=list)

    def __call__(self, request: dict[str, Any]) -> Any:
        if purpose(request) == EXTRACTION:
            self.extractions.append("".join(text for _, text in texts(request)))
            return json.dumps({"memories": [{"text": FACT, "files": []}]})
        n = int(re.findall(r"Item (\d+):", json.dumps(request["input"]))[-1])
        done = outputs(request)
        if not done:
            return [call(f"read-{n}", "read_file", {"path": "Makefile"})]
        if len(done) == 1:
            return [call(f"report-{n}", "report_result", {"n": n})]
        return f"item {n}: the Makefile runs pytest"


async def test_a_completed_fanout_on_temporal_extracts_once_from_its_workers(
    tmp_path: Path, workspace: Path
) -> None:
    policy = FanoutLearns()
    async with serve_model_server(policy) as model, time_skipping() as env:
        config = CorralConfig(
            home=tmp_path / "home", base_url=model.base_url, memories={"enabled": True}
        )
        async with in_process_worker(env.client, config):
            ex = TemporalExecutor(TemporalSettings(address="test"), POLICY, env.client)
            job = FanoutJob(
                items=({"n": 0}, {"n": 1}),
                template="Item {n}: check it.",
                result_schema=SCHEMA,
                cwd=workspace,
                run_id="run-fan",
            )
            with anyio.fail_after(WAIT):
                done = await ex.run_fanout(config, job, env={})
            await replay(await fetch_histories(env.client, "run-fan"))
    assert done.outcome.ok
    (transcript,) = policy.extractions
    assert "Worker of item 0" in transcript and "Worker of item 1" in transcript
    async with open_sqlite_memories(tmp_path / "home" / "journal.sqlite") as store:
        (kept,) = await store.memories(project_of(workspace))
    assert (kept.run_id, kept.text, kept.files) == ("run-fan", FACT, ("Makefile",))
