"""`corral exec --role supervisor` asking for twenty workers under the default limit of six.

Every spawn is admitted (six start, fourteen wait in order), all twenty finish, and the journal's
notes, read in the order they were written, never show more than six workers running at once.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

WORKERS = 20
LIMIT = 6  # agents.max_threads by default
HOLD = 30.0


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    args = json.dumps(arguments)
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": args}


def outputs(request: dict[str, Any]) -> dict[str, str]:
    items = request["input"]
    return {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}


def is_worker(request: dict[str, Any]) -> bool:
    return "<subagent_context>" in json.dumps(request["input"])


class TwentyWorkers:
    """Twenty spawns in one answer; workers hold their answer until all twenty were spawned."""

    def __init__(self) -> None:
        self.spawned = anyio.Event()
        self.spawn_answers: dict[str, str] = {}

    async def __call__(self, request: dict[str, Any]) -> Any:
        if is_worker(request):
            with anyio.fail_after(HOLD):
                await self.spawned.wait()
            return "worker done"
        done = outputs(request)
        if not done:
            return [
                call(f"spawn-{i}", "spawn_agent", {"message": f"task {i}"}) for i in range(WORKERS)
            ]
        self.spawned.set()
        self.spawn_answers = self.spawn_answers or done
        ids = [json.loads(done[f"spawn-{i}"])["agent_id"] for i in range(WORKERS)]
        finished: set[str] = set()
        for call_id, output in done.items():
            if call_id.startswith("wait-"):
                finished.update(json.loads(output)["status"])
        pending = [agent for agent in ids if agent not in finished]
        if not pending:
            return f"all {WORKERS} done"
        wait = {"targets": pending, "timeout_ms": 30_000}
        return [call(f"wait-{len(done)}", "wait_agent", wait)]


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
    script = TwentyWorkers()
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
