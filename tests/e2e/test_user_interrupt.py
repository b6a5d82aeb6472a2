"""A new user presses Ctrl-C in the middle of `corral exec`: the terminal says how to carry the
run on, `corral status` shows it interrupted, and `corral resume` finishes it without running
the shell command that already ran again."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_argv, corral_env, run_corral

pytestmark = pytest.mark.anyio
WAIT = 30.0
RUN = "run-ctrl-c"


class StallAfterShell:
    """Runs one shell command that leaves a mark, then stalls until released; later answers."""

    def __init__(self) -> None:
        self.stalled = anyio.Event()
        self.release = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        outputs = [i for i in request["input"] if i.get("type") == "function_call_output"]
        if not outputs:
            command = {"command": ["sh", "-c", "echo ran >> marks.txt"]}
            return [{"type": "function_call", "name": "shell", "arguments": json.dumps(command)}]
        if not self.stalled.is_set():
            self.stalled.set()
            await self.release.wait()
            return "too late: the client is gone"
        return "marked"


async def test_ctrl_c_in_exec_says_how_to_resume_and_resume_keeps_what_was_done(
    tmp_path: Path,
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    policy = StallAfterShell()
    argv = corral_argv("exec", "--run-id", RUN, "--sandbox", "workspace-write", "mark it")
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        process = await anyio.open_process(argv, env=env, cwd=workspace, start_new_session=True)
        with anyio.fail_after(WAIT):
            await policy.stalled.wait()
            os.killpg(process.pid, signal.SIGINT)
            code = await process.wait()
            assert process.stderr is not None
            stderr = (await process.stderr.receive()).decode()
            async for more in process.stderr:
                stderr += more.decode()
        policy.release.set()
        assert code == 130, stderr
        assert f"corral exec: stopped; resume with `corral resume {RUN}`" in stderr
        status = await run_corral(["status", RUN], env=env, cwd=workspace)
        assert "interrupted" in status.stdout
        resumed = await run_corral(["resume", RUN], env=env, cwd=workspace)
    assert resumed.code == 0, resumed.stderr
    assert resumed.stdout.strip() == "marked"
    assert (workspace / "marks.txt").read_text() == "ran\n", "the shell command ran once"
