"""Interactive sessions end to end: a scripted agent starts a 30 s process with `exec_command`,
talks to it in two later `write_stdin` calls, and the process is gone when the run ends or is
stopped; after a resume, the model is told its session is gone."""

from __future__ import annotations

import re
import secrets
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.model_server import serve_model_server

from .._scripted import call
from ..tools.exec_support import answerer_command, processes_with_arg
from ._cli import corral_argv, corral_env, run_corral

pytestmark = pytest.mark.anyio

SESSIONS_ON = ["-c", "shell.unified_exec=true"]
_SESSION = re.compile(r"session ID (\d+)")


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


class Talker:
    """Starts the answering process, sends it `one` then `two`, then answers `finished` (or
    waits on `stall` first, when given). Once `resumed`, it pokes the old session instead and
    keeps what it was told."""

    def __init__(self, marker: str, stall: anyio.Event | None = None) -> None:
        self.marker = marker
        self.stall = stall
        self.reached = anyio.Event()
        self.resumed = False
        self.told: str | None = None

    async def __call__(self, request: dict[str, Any]) -> Any:
        seen = outputs(request)
        if not seen:
            command = answerer_command(self.marker)
            return [call("c1", "exec_command", {"cmd": command, "yield_time_ms": 2000})]
        (sid,) = _SESSION.findall(seen[0])
        if len(seen) < 3:
            chars = ["one\n", "two\n"][len(seen) - 1]
            args = {"session_id": int(sid), "chars": chars, "yield_time_ms": 2000}
            return [call(f"c{len(seen) + 1}", "write_stdin", args)]
        if self.resumed and len(seen) == 3:
            args = {"session_id": int(sid), "chars": "three\n"}
            return [call("c9", "write_stdin", args)]
        if self.resumed:
            self.told = seen[-1]
        elif self.stall is not None:
            self.reached.set()
            await self.stall.wait()
        return "finished"


async def test_an_agent_talks_to_a_running_process_which_is_gone_when_the_run_ends(
    tmp_path: Path,
) -> None:
    talker = Talker(f"corral-e2e-{secrets.token_hex(4)}")
    async with serve_model_server(talker) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        result = await run_corral(["exec", *SESSIONS_ON, "talk to it"], env=env, cwd=tmp_path)
        last = server.requests[-1]["body"]
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "finished"
    started, first, second = outputs(last)
    assert "ready" in started and "Process running with session ID" in started
    assert "answer:one" in first and "answer:two" in second
    assert processes_with_arg(talker.marker) == []


async def test_a_stopped_run_leaves_no_process_and_its_resume_is_told_the_session_is_gone(
    tmp_path: Path,
) -> None:
    stall = anyio.Event()
    talker = Talker(f"corral-e2e-{secrets.token_hex(4)}", stall)
    async with serve_model_server(talker) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        argv = corral_argv("exec", *SESSIONS_ON, "--run-id", "run-talk", "talk to it")
        process = await anyio.open_process(argv, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL)
        with anyio.fail_after(60):
            await talker.reached.wait()
            assert processes_with_arg(talker.marker), "the session runs while the agent does"
            process.send_signal(signal.SIGTERM)
            await process.wait()
        assert processes_with_arg(talker.marker) == []
        talker.resumed = True
        stall.set()
        resumed = await run_corral(["resume", "run-talk"], env=env, cwd=tmp_path)
    assert resumed.code == 0, resumed.stderr
    assert talker.told is not None
    assert "is not running" in talker.told and "never resumed" in talker.told
