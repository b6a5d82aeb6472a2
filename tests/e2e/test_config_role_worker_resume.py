"""A supervisor's worker of a config role (`[agents.roles.NAME]`) through a stop and a resume:
the real CLI, killed with SIGKILL or interrupted with SIGINT while the worker waits for its
model, then `corral resume` after the role was changed in (or removed from) the config. The
worker carries on as it was spawned: its role's instructions, model and narrowed sandbox come
from the spec the journal holds, not from the config read again."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.orchestrator.model_server import serve_model_server
from tests._scripted import Supervise, call, is_worker, outputs, texts

from ._cli import corral_argv, corral_env, run_corral

pytestmark = pytest.mark.anyio

WAIT = 30.0
RUN = "run-role-kill"
AUDITOR = """
[agents.roles.auditor]
description = "checks licences"
instructions = "List every licence you find."
model = "audit-model"
sandbox_mode = "read-only"
"""
CHANGED = """
[agents.roles.auditor]
description = "checks licences"
instructions = "Delete every licence you find."
model = "other-model"
sandbox_mode = "workspace-write"
"""
GONE = "# the auditor role was removed\n"
WRITE = "echo written > src/escaped.txt"


class StallAuditor:
    """A supervisor of one auditor whose requests hang until the test has stopped the run
    (`stalled` is set once it waits and the supervisor is in `wait_agent`). Resumed, the
    supervisor tells an auditor the stop interrupted to carry on and waits for it; the auditor
    tries to write into the workspace, then answers."""

    def __init__(self) -> None:
        self.supervise = Supervise({"spawn-a": {"message": "audit src", "role": "auditor"}}, "ok")
        self.stalled = anyio.Event()
        self.release = anyio.Event()
        self.worker_waits = False
        self.supervisor_waits = False

    async def __call__(self, request: dict[str, Any]) -> Any:
        if is_worker(request):
            return await self._auditor(request)
        if self.stalled.is_set():
            return _resumed_supervisor(outputs(request))
        answer = self.supervise(request)
        self.supervisor_waits = isinstance(answer, list) and answer[0]["name"] == "wait_agent"
        self._check()
        return answer

    async def _auditor(self, request: dict[str, Any]) -> Any:
        if self.stalled.is_set():
            return (
                "MIT everywhere" if outputs(request) else [call("w", "shell", {"command": WRITE})]
            )
        self.worker_waits = True
        self._check()
        with anyio.fail_after(WAIT * 2):
            await self.release.wait()
        return "too late: the run is gone"

    def _check(self) -> None:
        if self.worker_waits and self.supervisor_waits:
            self.stalled.set()


def _resumed_supervisor(done: dict[str, str]) -> Any:
    """`ok` once a wait saw the auditor done; else tell it to carry on (once), and wait."""
    auditor = json.loads(done["spawn-a"])["agent_id"]
    waits = [json.loads(o) for k, o in done.items() if k.startswith("wait-") and o[:1] == "{"]
    if any(w["status"].get(auditor, {}).get("status") == "completed" for w in waits):
        return "ok"
    if "nudge" not in done:
        return [call("nudge", "send_input", {"target": auditor, "message": "carry on"})]
    return [call(f"wait-{len(done)}", "wait_agent", {"targets": [auditor], "timeout_ms": 20_000})]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


def home_with(tmp_path: Path, text: str) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)
    return home


async def stopped_with_a_worker_waiting(
    policy: StallAuditor, env: dict[str, str], workspace: Path, how: signal.Signals
) -> None:
    argv = corral_argv("exec", "--role", "supervisor", "--run-id", RUN, "audit the repo")
    process = await anyio.open_process(argv, env=env, cwd=workspace, start_new_session=True)
    try:
        with anyio.fail_after(WAIT):
            await policy.stalled.wait()
    finally:
        os.killpg(process.pid, how)
        with anyio.fail_after(WAIT):
            await process.wait()
        await process.aclose()


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["killed", "interrupted"])
@pytest.mark.parametrize("config_now", [CHANGED, GONE], ids=["role-changed", "role-removed"])
async def test_a_supervisors_worker_of_a_config_role_keeps_its_role_through_a_stop_and_resume(
    workspace: Path, tmp_path: Path, config_now: str, how: signal.Signals
) -> None:
    home = home_with(tmp_path, AUDITOR)
    policy = StallAuditor()
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        await stopped_with_a_worker_waiting(policy, env, workspace, how)
        policy.release.set()
        killed = len(server.requests)
        home_with(tmp_path, config_now)
        result = await run_corral(["resume", RUN], env=env, cwd=workspace)
        before = [r["normalised"] for r in server.requests[:killed] if is_worker(r["normalised"])]
        after = [r["normalised"] for r in server.requests[killed:] if is_worker(r["normalised"])]
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "ok"
    (started,) = before
    assert after, "the worker asked its model again after the resume"
    for resumed in after:
        assert resumed["model"] == "audit-model"
        assert resumed["instructions"] == started["instructions"]
        assert resumed["instructions"].endswith(
            "# Your role: auditor\n\nList every licence you find.\n"
        )
        assert "## Sandbox: read-only" in texts(resumed)[0][1]
        assert resumed["tools"] == started["tools"]
    assert not (workspace / "src" / "escaped.txt").exists(), "the sandbox stayed read-only"
    assert "Exit code: 0" not in outputs(after[-1])["w"]
