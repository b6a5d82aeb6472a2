"""Memory on the shared PostgreSQL journal, end to end: a fact learned by a run on one machine's
home is recalled by a run with another home on the same journal, `corral memory` reads it there,
and `corral journal copy` carries memories from an SQLite journal into PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.orchestrator.model_server import serve_model_server
from tests.e2e._cli import corral_env, run_corral

from ._scripted import FACT, LearnsAFact, memory_fragments
from .test_memory_runs import CONFIG, agent_requests, repository

# Each step is a real `corral` process; a loaded machine needs more than the default minute.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]


def home_with_memory(path: Path) -> Path:
    path.mkdir()
    (path / "config.toml").write_text(CONFIG)
    return path


async def test_a_fact_learned_on_one_home_is_recalled_on_another_sharing_the_journal(
    tmp_path: Path, postgres_url: str
) -> None:
    first, second = home_with_memory(tmp_path / "a"), home_with_memory(tmp_path / "b")
    repo = repository(tmp_path / "repo")
    policy = LearnsAFact()
    async with serve_model_server(policy) as server:
        env = corral_env(first, server.base_url, CORRAL_JOURNAL_URL=postgres_url)
        done = await run_corral(["exec", "Find the test command"], env=env, cwd=repo)
        assert done.code == 0, done.stderr
        policy.facts = ()  # the second run learns nothing: what it recalls is the first's
        seen = len(server.requests)
        env = corral_env(second, server.base_url, CORRAL_JOURNAL_URL=postgres_url)
        done = await run_corral(["exec", "How do I run the tests?"], env=env, cwd=repo)
        assert done.code == 0, done.stderr
        later = agent_requests(server.requests[seen:])
        listed = await run_corral(["memory", "list", "--json"], env=env, cwd=repo)
    assert any(FACT in f for f in memory_fragments(later[0]))
    assert listed.code == 0, listed.stderr
    assert [m["text"] for m in json.loads(listed.stdout)["memories"]] == [FACT]
    assert not (first / "journal.sqlite").exists() and not (second / "journal.sqlite").exists()


async def test_journal_copy_carries_the_memories_into_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    home = home_with_memory(tmp_path / "home")
    repo = repository(tmp_path / "repo")
    async with serve_model_server(LearnsAFact()) as server:
        env = corral_env(home, server.base_url)
        done = await run_corral(["exec", "Find the test command"], env=env, cwd=repo)
        assert done.code == 0, done.stderr
    source = f"sqlite:{home / 'journal.sqlite'}"
    copied = await run_corral(
        ["journal", "copy", "--from", source, "--to", postgres_url], env=env, cwd=repo
    )
    assert copied.code == 0, copied.stderr
    assert "copied 1 memories and 0 insight(s)" in copied.stdout
    pg_env = corral_env(home_with_memory(tmp_path / "b"), CORRAL_JOURNAL_URL=postgres_url)
    listed = await run_corral(["memory", "list", "--json"], env=pg_env, cwd=repo)
    assert listed.code == 0, listed.stderr
    (memory,) = json.loads(listed.stdout)["memories"]
    assert memory["text"] == FACT and memory["files"] == ["Makefile"]
