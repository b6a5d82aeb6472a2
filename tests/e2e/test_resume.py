"""A `corral exec` killed with SIGKILL, then `corral resume`: no tool call runs twice."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_argv, corral_env, run_corral

pytestmark = pytest.mark.anyio

WAIT = 30.0


def shell_call(command: str) -> dict[str, Any]:
    args = json.dumps({"command": command})
    return {"type": "function_call", "call_id": "c-witness", "name": "shell", "arguments": args}


def tool_outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


class StallAfterTool:
    """Asks for one shell command; on the next request, stalls until the test has killed us."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.stalled = anyio.Event()
        self.release = anyio.Event()
        self.seen: list[list[str]] = []

    async def __call__(self, request: dict[str, Any]) -> Any:
        outputs = tool_outputs(request)
        self.seen.append(outputs)
        if not outputs:
            return [shell_call(self.command)]
        if not self.stalled.is_set():
            self.stalled.set()
            await self.release.wait()
            return "too late: the client is gone"
        return "finished after resume"


async def start_exec(workspace: Path, env: dict[str, str]) -> anyio.abc.Process:
    argv = corral_argv("exec", "--run-id", "run-killed", "append to the witness")
    return await anyio.open_process(argv, env=env, cwd=workspace, start_new_session=True)


async def kill_hard(process: anyio.abc.Process) -> None:
    os.killpg(process.pid, 9)
    with anyio.fail_after(WAIT):
        await process.wait()


async def test_killed_between_a_tool_call_and_the_next_model_call_resumes_without_rerunning(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    policy = StallAfterTool("echo ran >> witness.txt")
    async with serve_model_server(policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        process = await start_exec(workspace, env)
        with anyio.fail_after(WAIT):
            await policy.stalled.wait()
        await kill_hard(process)
        policy.release.set()
        result = await run_corral(["resume", "run-killed"], env=env, cwd=workspace)
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "finished after resume"
    assert (workspace / "witness.txt").read_text() == "ran\n", "the tool ran exactly once"
    assert "Exit code: 0" in policy.seen[-1][0], "the journaled result was sent again"


async def test_killed_while_a_tool_runs_the_model_learns_its_outcome_is_unknown(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gate = workspace / "gate.fifo"
    os.mkfifo(gate)
    policy = StallAfterTool("echo ran >> witness.txt; cat gate.fifo")
    async with serve_model_server(policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        process = await start_exec(workspace, env)
        # Opening the FIFO for writing returns once the sandboxed `cat` opened it to read:
        # the command is running, and the witness line is written.
        with anyio.fail_after(WAIT):
            fd = await anyio.to_thread.run_sync(os.open, gate, os.O_WRONLY, abandon_on_cancel=True)
        await kill_hard(process)
        os.close(fd)
        policy.stalled.set()  # the next request is the resumed one: answer it at once
        result = await run_corral(["resume", "run-killed"], env=env, cwd=workspace)
    assert result.code == 0, result.stderr
    assert (workspace / "witness.txt").read_text() == "ran\n", "the tool was not run again"
    told = policy.seen[-1][0]
    assert "<tool_call_interrupted>" in told and "unknown" in told
