"""`corral exec --role supervisor` asking for twenty workers under the default limit of six.

Every spawn is admitted (six start, fourteen wait in order), all twenty finish, and the journal's
notes, read in the order they were written, never show more than six workers running at once.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from corral.orchestrator.model_server import serve_model_server
from tests._scripted import SpawnAllAtOnce

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

WORKERS = 20
LIMIT = 6  # agents.max_threads by default
HOLD = 30.0


def journal_notes(home: Path) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """The start and end notes of every agent in journal order, and each agent's status."""
    with sqlite3.connect(home / "journal.sqlite") as db:
        notes = db.execute(
            "SELECT kind, agent_id FROM events WHERE kind IN ('agent_started', 'agent_finished') "
            "ORDER BY rowid"
        ).fetchall()
        statuses = dict(db.execute("SELECT agent_id, status FROM agents").fetchall())
    return [(str(k), str(a)) for k, a in notes], {str(k): str(v) for k, v in statuses.items()}


async def test_twenty_workers_under_a_limit_of_six_all_finish_and_never_more_than_six_run(
    tmp_path: Path,
) -> None:
    script = SpawnAllAtOnce(WORKERS, HOLD)
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    async with serve_model_server(script) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        result = await run_corral(
            ["exec", "--role", "supervisor", "do twenty things"], env=env, cwd=workspace
        )
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == f"all {WORKERS} done"

    answers = [json.loads(script.spawn_answers[f"spawn-{i}"]) for i in range(WORKERS)]
    assert [a["status"] for a in answers].count("queued") == WORKERS - LIMIT
    workers = {a["agent_id"] for a in answers}
    notes, statuses = journal_notes(tmp_path / "home")
    assert {statuses[w] for w in workers} == {"completed"}
    running = most = 0
    for kind, agent_id in notes:
        if agent_id in workers:
            running += 1 if kind == "agent_started" else -1
            most = max(most, running)
    assert most == LIMIT
    started = [agent for kind, agent in notes if kind == "agent_started" and agent in workers]
    assert started == [a["agent_id"] for a in answers], "queued workers start in spawn order"
