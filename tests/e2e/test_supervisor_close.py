"""A worker closed by its supervisor stays closed when the run is resumed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

_CONTEXT = re.compile(r"<subagent_context>\nYou are (\S+) \(agent id (\S+)\)")


def is_worker(request: dict[str, Any]) -> bool:
    return any(
        item.get("type") == "message" and _CONTEXT.match(item["content"][0].get("text", ""))
        for item in request["input"]
    )


def outputs(request: dict[str, Any]) -> dict[str, str]:
    items = request["input"]
    return {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    args = json.dumps(arguments)
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": args}


class CloseTheWorker:
    """The worker never answers on its own; the supervisor spawns it, then closes it."""

    def __init__(self) -> None:
        self.worker_requests = 0
        self.worker_started = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if is_worker(request):
            self.worker_requests += 1
            self.worker_started.set()
            await anyio.sleep_forever()
        done = outputs(request)
        if "spawn" not in done:
            return [call("spawn", "spawn_agent", {"message": "wait forever", "role": "general"})]
        if "close" not in done:
            with anyio.fail_after(30):
                await self.worker_started.wait()
            agent_id = json.loads(done["spawn"])["agent_id"]
            return [call("close", "close_agent", {"target": agent_id})]
        return "closed it"


async def test_a_closed_worker_is_not_run_again_on_resume(tmp_path: Path) -> None:
    policy = CloseTheWorker()
    async with serve_model_server(policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        argv = ["exec", "--role", "supervisor", "--run-id", "run-close", "go"]
        first = await run_corral(argv, env=env, cwd=tmp_path)
        assert first.code == 0, first.stderr
        assert first.stdout.strip() == "closed it"
        status = await run_corral(["status", "run-close", "--json"], env=env, cwd=tmp_path)
        statuses = [a["status"] for a in json.loads(status.stdout)["agents"]]
        assert statuses == ["completed", "closed"]
        resumed = await run_corral(["resume", "run-close", "anything else?"], env=env, cwd=tmp_path)
        assert resumed.code == 0, resumed.stderr
    assert policy.worker_requests == 1, "the closed worker got no request after the resume"
