"""A model that answers `call_0` for every call (some OpenAI-compatible servers do), end to end:
`corral exec` and `corral fanout` finish over both wire APIs, every call runs once, and a run
killed midway resumes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import open_sqlite_store
from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_argv, corral_env, run_corral

pytestmark = pytest.mark.anyio
WAIT = 30.0
SHELL_TURNS = 3
ITEMS = 4
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
_ITEM = re.compile(r"Item (\d+):")
APIS = ["responses", "chat"]


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def call_0(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    args = json.dumps(arguments)
    return [{"type": "function_call", "call_id": "call_0", "name": name, "arguments": args}]


def exec_policy(request: dict[str, Any]) -> Any:
    """Three shell calls, each with id `call_0`, then a summary of what they printed."""
    done = outputs(request)
    if len(done) < SHELL_TURNS:
        return call_0("shell", {"command": f"echo run {len(done)} >> witness.txt; echo ok"})
    return f"ran {len(done)} commands"


def fanout_policy(request: dict[str, Any]) -> Any:
    """Per item: a shell call that writes a witness line, then `report_result`; both `call_0`."""
    (n, *_) = reversed(_ITEM.findall(json.dumps(request["input"])))
    done = outputs(request)
    if not done:
        return call_0("shell", {"command": f"echo {n} >> witness.txt"})
    if len(done) == 1:
        return call_0("report_result", {"n": int(n)})
    return f"item {n} reported"


def witness(workspace: Path) -> list[str]:
    return sorted((workspace / "witness.txt").read_text().splitlines())


@pytest.mark.parametrize("api", APIS)
async def test_exec_finishes_with_a_model_that_repeats_call_0(tmp_path: Path, api: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with serve_model_server(exec_policy) as server:
        env = corral_env(tmp_path / "home", server.base_url, CORRAL_API=api)
        result = await run_corral(["exec", "run three commands"], env=env, cwd=workspace)
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == f"ran {SHELL_TURNS} commands"
    assert witness(workspace) == [f"run {n}" for n in range(SHELL_TURNS)]


@pytest.mark.parametrize("api", APIS)
async def test_fanout_finishes_every_item_with_a_model_that_repeats_call_0(
    tmp_path: Path, api: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "items.jsonl").write_text("".join(f'{{"n": {n}}}\n' for n in range(ITEMS)))
    (workspace / "schema.json").write_text(json.dumps(SCHEMA))
    args = ["fanout", "--items", "items.jsonl", "--schema", "schema.json"]
    args += ["--template", "Item {n}: write {n} to the witness and report it."]
    async with serve_model_server(fanout_policy) as server:
        env = corral_env(tmp_path / "home", server.base_url, CORRAL_API=api)
        result = await run_corral(args, env=env, cwd=workspace)
    assert result.code == 0, result.stderr
    lines = [json.loads(line) for line in (workspace / "results.jsonl").read_text().splitlines()]
    assert [(r["status"], r["result"]) for r in lines] == [("done", {"n": n}) for n in range(ITEMS)]
    assert witness(workspace) == [str(n) for n in range(ITEMS)]


class StallOnThird:
    """`exec_policy`, except that the request after the second call stalls until released."""

    def __init__(self) -> None:
        self.stalled = anyio.Event()
        self.release = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if len(outputs(request)) == 2 and not self.stalled.is_set():
            self.stalled.set()
            await self.release.wait()
            return "too late: the client is gone"
        return exec_policy(request)


async def test_an_exec_killed_after_repeated_call_ids_resumes(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    policy = StallOnThird()
    async with serve_model_server(policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        argv = corral_argv("exec", "--run-id", "run-0", "run three commands")
        process = await anyio.open_process(argv, env=env, cwd=workspace, start_new_session=True)
        with anyio.fail_after(WAIT):
            await policy.stalled.wait()
            os.killpg(process.pid, 9)
            await process.wait()
        policy.release.set()
        result = await run_corral(["resume", "run-0"], env=env, cwd=workspace)
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == f"ran {SHELL_TURNS} commands"
    assert witness(workspace) == [f"run {n}" for n in range(SHELL_TURNS)]
    async with open_sqlite_store(tmp_path / "home" / "journal.sqlite") as store:
        [agent] = await store.list_agents("run-0")
        ids = [e.call_id for e in await store.ledger(agent.agent_id)]
    assert ids == ["call_0", "call_0~2", "call_0~3"]
