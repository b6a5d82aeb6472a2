"""Memory across runs, end to end: `corral exec` against the scripted server over HTTP.

Run 1 learns a project fact; run 2 in the same repository is shown it in its memory fragment,
a run in another repository is not; `corral memory forget` takes it out of later prompts.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.memory import EXTRACTION
from corral.orchestrator.model_server import serve_model_server

from .._scripted import Supervise, is_worker
from ..e2e._cli import corral_env, run_corral
from ._scripted import FACT, LearnsAFact, memory_fragments, purpose

pytestmark = pytest.mark.anyio

CONFIG = "[memories]\nenabled = true\n"


def repository(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "Makefile").write_text("check:\n\tpython -m pytest -q\n")
    return path


def agent_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if purpose(r["normalised"]) is None]


async def test_a_fact_learned_in_one_run_is_recalled_in_the_same_repository_only(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    repo, other = repository(tmp_path / "repo"), repository(tmp_path / "other")
    policy = LearnsAFact()
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        first = await run_corral(["exec", "Find how to run the tests"], env=env, cwd=repo)
        assert first.code == 0, first.stderr
        assert len(policy.extractions) == 1
        assert all(not memory_fragments(r) for r in agent_requests(server.requests))
        seen = len(server.requests)
        second = await run_corral(["exec", "How do I run the tests?"], env=env, cwd=repo / ".")
        assert second.code == 0, second.stderr
        again = agent_requests(server.requests[seen:])
        seen = len(server.requests)
        elsewhere = await run_corral(["exec", "How do I run the tests?"], env=env, cwd=other)
        assert elsewhere.code == 0, elsewhere.stderr
        foreign = agent_requests(server.requests[seen:])
    (fragment,) = memory_fragments(again[0])
    assert FACT in fragment
    # Sent once, at the first turn; the next request carries it as earlier input, unchanged:
    # the whole first request's input is the second's prefix.
    assert memory_fragments(again[1]) == [fragment]
    opening = again[0]["normalised"]["input"]
    assert again[1]["normalised"]["input"][: len(opening)] == opening
    assert all(not memory_fragments(r) for r in foreign)


async def test_forget_removes_a_memory_from_every_later_prompt(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    repo = repository(tmp_path / "repo")
    policy = LearnsAFact()
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        assert (await run_corral(["exec", "Find the test command"], env=env, cwd=repo)).code == 0
        listed = await run_corral(["memory", "list", "--json"], env=env, cwd=repo)
        assert listed.code == 0, listed.stderr
        (memory,) = json.loads(listed.stdout)["memories"]
        assert memory["text"] == FACT and memory["files"] == ["Makefile"]
        forgot = await run_corral(["memory", "forget", memory["memory_id"]], env=env, cwd=repo)
        assert forgot.code == 0, forgot.stderr
        policy.facts = ()  # the next run learns nothing new, so only a leftover could show
        seen = len(server.requests)
        assert (await run_corral(["exec", "Run the tests"], env=env, cwd=repo)).code == 0
        later = agent_requests(server.requests[seen:])
    assert later and all(not memory_fragments(r) for r in later)


async def test_memory_is_off_unless_the_config_turns_it_on(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    policy = LearnsAFact()
    async with serve_model_server(policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        for _ in range(2):
            done = await run_corral(["exec", "Find the test command"], env=env, cwd=repo)
            assert done.code == 0, done.stderr
    assert policy.extractions == []
    assert all(not memory_fragments(r) for r in server.requests)


@dataclass
class SupervisesWithMemory:
    """The supervisor spawns two workers; extraction requests are counted and answered."""

    supervise: Supervise = field(
        default_factory=lambda: Supervise(
            {"spawn-a": {"message": "check a.py"}, "spawn-b": {"message": "check b.py"}},
            "both done",
        )
    )
    extractions: int = 0

    def __call__(self, request: dict[str, Any]) -> Any:
        if purpose(request) == EXTRACTION:
            self.extractions += 1
            return json.dumps({"memories": []})
        return self.supervise(request)


async def test_workers_recall_the_projects_memories_but_the_run_extracts_once(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    repo = repository(tmp_path / "repo")
    async with serve_model_server(LearnsAFact()) as server:
        env = corral_env(home, server.base_url)
        assert (await run_corral(["exec", "Find the test command"], env=env, cwd=repo)).code == 0
    policy = SupervisesWithMemory()
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        args = ["exec", "--role", "supervisor", "check a.py and b.py"]
        done = await run_corral(args, env=env, cwd=repo)
        assert done.code == 0, done.stderr
        requests = agent_requests(server.requests)
    assert policy.extractions == 1
    workers = [r for r in requests if is_worker(r["normalised"])]
    assert workers and all(FACT in "".join(memory_fragments(r)) for r in workers)


async def test_consolidate_merges_a_projects_memories_into_insights_later_prompts_show(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    repo = repository(tmp_path / "repo")
    policy = LearnsAFact(insight="Use make check for every test run.")
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        assert (await run_corral(["exec", "Find the test command"], env=env, cwd=repo)).code == 0
        merged = await run_corral(["memory", "consolidate", "--json"], env=env, cwd=repo)
        assert merged.code == 0, merged.stderr
        (insight,) = json.loads(merged.stdout)
        listed = json.loads(
            (await run_corral(["memory", "list", "--json"], env=env, cwd=repo)).stdout
        )
        assert insight["source_ids"] == [m["memory_id"] for m in listed["memories"]]
        policy.facts = ()
        seen = len(server.requests)
        assert (await run_corral(["exec", "Run the tests"], env=env, cwd=repo)).code == 0
        later = agent_requests(server.requests[seen:])
    (fragment,) = memory_fragments(later[0])
    assert "Use make check for every test run." in fragment
