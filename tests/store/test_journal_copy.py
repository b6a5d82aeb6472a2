"""`corral journal copy` and `corral journal migrate`, end to end with the real command.

Three runs made by real scripted runs (two execs, one with shell calls in the ledger, and a
fan-out with items) are copied from the SQLite journal into PostgreSQL; `corral status` and
`corral export` read the same from either. A second copy skips them; a clashing run is refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from corral.agents._store import RunRecord, open_journal
from corral.orchestrator.model_server import serve_model_server
from tests.e2e._cli import corral_env, run_corral

# Each step is a real `corral` process; a loaded machine needs more than the default minute.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

RUNS = ["run-plain", "run-shell", "run-fan"]
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
_ITEM = re.compile(r"Item (\d+):")


def _outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def _call(name: str, arguments: dict[str, Any], n: int) -> list[dict[str, Any]]:
    args = json.dumps(arguments)
    return [{"type": "function_call", "call_id": f"call_{n}", "name": name, "arguments": args}]


def policy(request: dict[str, Any]) -> Any:
    """Plain answers, two shell calls for the shell run, and a reported result per item."""
    text = json.dumps(request["input"])
    done = _outputs(request)
    items = _ITEM.findall(text)
    if items:
        n = int(items[-1])
        return _call("report_result", {"n": n}, 0) if not done else f"item {n} reported"
    if "use the shell" in text and len(done) < 2:
        return _call("shell", {"command": f"echo step {len(done)}"}, len(done))
    return "done"


async def make_three_runs(home: Path, workspace: Path) -> None:
    (workspace / "items.jsonl").write_text("".join(f'{{"n": {n}}}\n' for n in range(3)))
    (workspace / "schema.json").write_text(json.dumps(SCHEMA))
    fanout = ["fanout", "--items", "items.jsonl", "--schema", "schema.json", "--run-id"]
    commands = [
        ["exec", "--run-id", RUNS[0], "say hello"],
        ["exec", "--run-id", RUNS[1], "use the shell twice"],
        [*fanout, RUNS[2], "--template", "Item {n}: count it.", "--out", "-"],
    ]
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        for args in commands:
            done = await run_corral(args, env=env, cwd=workspace)
            assert done.code == 0, done.stderr


async def views(env: dict[str, str], cwd: Path) -> list[str]:
    """What a user reads about the runs: their list, each one's status and its export."""
    seen = [(await run_corral(["runs"], env=env, cwd=cwd)).stdout]
    for run in RUNS:
        for args in (["status", run], ["export", run]):
            result = await run_corral(args, env=env, cwd=cwd)
            assert result.code == 0, result.stderr
            seen.append(result.stdout)
    return seen


async def test_copy_moves_three_runs_and_status_reads_the_same_from_both(
    tmp_path: Path, postgres_url: str
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    await make_three_runs(home, workspace)
    sqlite_env = corral_env(home)
    source = f"sqlite:{home / 'journal.sqlite'}"
    copied = await run_corral(
        ["journal", "copy", "--from", source, "--to", postgres_url], env=sqlite_env, cwd=workspace
    )
    assert copied.code == 0, copied.stderr
    assert copied.stdout.startswith("copied 3 run(s) with ")
    pg_env = corral_env(tmp_path / "elsewhere", CORRAL_JOURNAL_URL=postgres_url)
    assert await views(pg_env, workspace) == await views(sqlite_env, workspace)
    again = await run_corral(
        ["journal", "copy", "--from", source, "--to", postgres_url], env=sqlite_env, cwd=workspace
    )
    assert again.code == 0, again.stderr
    assert "copied 0 run(s)" in again.stdout and "skipped 3 run(s)" in again.stdout


async def test_copy_refuses_a_run_the_destination_holds_differently_and_copies_nothing(
    tmp_path: Path, postgres_url: str
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    await make_three_runs(home, workspace)
    async with open_journal(postgres_url) as dest:
        other = RunRecord(
            run_id=RUNS[2], kind="exec", status="done", created_at=1, updated_at=1, config={}
        )
        await dest.create_run(other)
    result = await run_corral(
        ["journal", "copy", "--from", f"sqlite:{home / 'journal.sqlite'}", "--to", postgres_url],
        env=corral_env(home),
        cwd=workspace,
    )
    assert result.code == 2
    assert f"run '{RUNS[2]}' already exists" in result.stderr
    assert "Traceback" not in result.stderr
    async with open_journal(postgres_url) as dest:
        assert [run.run_id for run in await dest.list_runs()] == [RUNS[2]]


async def test_migrate_says_what_it_applied_then_that_nothing_was_left(
    tmp_path: Path, postgres_url: str
) -> None:
    env = corral_env(tmp_path / "home")
    first = await run_corral(["journal", "migrate", "--url", postgres_url], env=env, cwd=tmp_path)
    assert first.code == 0, first.stderr
    assert "applied migration(s) 1, 2, 3, 4, 5;" in first.stdout
    again = await run_corral(["journal", "migrate", "--url", postgres_url], env=env, cwd=tmp_path)
    assert "nothing to apply" in again.stdout
    local = await run_corral(["journal", "migrate"], env=env, cwd=tmp_path)
    assert re.search(r"journal\.sqlite: applied migration\(s\) 1, 2, 3;", local.stdout)


async def test_a_password_in_the_journal_url_is_never_printed(tmp_path: Path) -> None:
    url = "postgresql://corral:hunter2secret@127.0.0.1:1/nowhere"
    env = corral_env(tmp_path / "home", CORRAL_JOURNAL_URL=url)
    for args in (["runs"], ["journal", "migrate"], ["doctor"], ["status", "run-x"]):
        result = await run_corral(args, env=env, cwd=tmp_path, deadline=60)
        assert result.code != 0
        assert "hunter2secret" not in result.stdout + result.stderr
        assert "corral:***@127.0.0.1:1" in result.stdout + result.stderr


async def test_runs_made_with_a_postgresql_journal_write_there_and_not_to_the_home(
    tmp_path: Path, postgres_url: str
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url, CORRAL_JOURNAL_URL=postgres_url)
        for args in (["exec", "--run-id", RUNS[1], "use the shell twice"],):
            done = await run_corral(args, env=env, cwd=workspace)
            assert done.code == 0, done.stderr
    assert not (home / "journal.sqlite").exists()
    async with open_journal(postgres_url, read_only=True) as journal:
        (agent,) = await journal.list_agents(RUNS[1])
        assert [entry.state for entry in await journal.ledger(agent.agent_id)] == ["finished"] * 2
    other_home = corral_env(tmp_path / "elsewhere", CORRAL_JOURNAL_URL=postgres_url)
    status = await run_corral(["status", RUNS[1]], env=other_home, cwd=workspace)
    assert status.code == 0, status.stderr
    assert f"run {RUNS[1]} (exec): completed" in status.stdout
