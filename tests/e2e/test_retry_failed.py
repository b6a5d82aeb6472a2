"""`corral resume RUN --retry-failed`: the failed items of a fan-out run again, the done ones kept.

Before it, `corral resume` of a fan-out with failed items said "0 to go" and a failed item could
never be tried again. Here one worker in three declines to report the first time; after the model
"recovers", the retry runs exactly the failed items with fresh agents.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server
from tests._fanout import fanout_workspace

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

ITEMS = 6
RUN = "run-retry"
_ITEM = re.compile(r"Item (\d+):")


@dataclass
class FlakyReporter:
    """Items divisible by three decline to report until `recovered`; every request is noted."""

    recovered: bool = False
    asked: list[int] = field(default_factory=list)

    def __call__(self, request: dict[str, Any]) -> Any:
        item = int(_ITEM.findall(json.dumps(request["input"]))[-1])
        self.asked.append(item)
        if any(i.get("type") == "function_call_output" for i in request["input"]):
            return "reported"
        if item % 3 == 0 and not self.recovered:
            return "I would rather not say."
        arguments = json.dumps({"n": item})
        return [{"type": "function_call", "name": "report_result", "arguments": arguments}]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return fanout_workspace(tmp_path / "ws", ITEMS)


FANOUT = [
    *("fanout", "--items", "items.jsonl", "--schema", "schema.json", "--run-id", RUN),
    *("--template", "Item {n}: report it."),
]


def results(workspace: Path) -> list[tuple[int, str, Any]]:
    lines = (workspace / "results.jsonl").read_text().splitlines()
    return [(r["index"], r["status"], r["result"]) for r in map(json.loads, lines)]


async def test_retry_failed_runs_only_the_failed_items_again_and_keeps_the_done_ones(
    workspace: Path, tmp_path: Path
) -> None:
    policy = FlakyReporter()
    async with serve_model_server(policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        first = await run_corral(FANOUT, env=env, cwd=workspace)
        assert first.code == 1 and "4 done, 2 failed of 6 items" in first.stderr
        assert f"again with `corral resume {RUN} --retry-failed`" in first.stderr
        plain = await run_corral(["resume", RUN], env=env, cwd=workspace)
        assert "(6 items, 0 to go)" in plain.stderr and plain.code == 1, "plain resume keeps them"

        policy.recovered, policy.asked = True, []
        retried = await run_corral(["resume", RUN, "--retry-failed"], env=env, cwd=workspace)
        status = await run_corral(["status", RUN, "--json"], env=env, cwd=workspace)
    assert retried.code == 0, retried.stderr
    assert f"corral resume: run {RUN} (6 items, 2 to go)" in retried.stderr
    assert "6 done, 0 failed of 6 items" in retried.stderr
    assert sorted(set(policy.asked)) == [0, 3], "only the failed items ran again"
    assert results(workspace) == [(n, "done", {"n": n}) for n in range(ITEMS)]
    journal = json.loads(status.stdout)
    assert journal["run"]["status"] == "done"
    agents_of = [a["nickname"] for a in journal["agents"]]
    assert agents_of.count("item 0") == 2 and agents_of.count("item 1") == 1, "fresh agents"


async def test_retry_failed_on_a_run_that_is_not_a_fanout_is_refused_in_one_line(
    workspace: Path, tmp_path: Path
) -> None:
    async with serve_model_server(lambda request: "done") as server:
        env = corral_env(tmp_path / "home", server.base_url)
        ran = await run_corral(["exec", "--run-id", "run-one", "say hi"], env=env, cwd=workspace)
        assert ran.code == 0, ran.stderr
        refused = await run_corral(["resume", "run-one", "--retry-failed"], env=env, cwd=workspace)
    assert refused.code == 2
    assert refused.stderr.strip().splitlines() == [
        "corral resume: error: run-one is not a fan-out run: only fan-outs have failed items to "
        "run again; drop --retry-failed"
    ]
