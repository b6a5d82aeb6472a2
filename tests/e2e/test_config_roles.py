"""Roles of one's own through the real CLI: `corral exec --role NAME` for a config role, a
supervisor's worker of one, an unknown role refused in one line, and a resume that keeps the
instructions the agent started with after the config changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.agents import base_instructions
from corral.orchestrator.model_server import serve_model_server
from tests._scripted import Supervise, is_worker, texts

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

AUDITOR = """
[agents.roles.auditor]
description = "checks licences"
instructions = "List every licence you find."
model = "audit-model"
sandbox_mode = "read-only"
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def home_with(tmp_path: Path, text: str) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)
    return home


def answer(request: dict[str, Any]) -> str:
    return "MIT everywhere"


async def test_exec_with_a_config_role_sends_its_instructions_model_and_sandbox(
    workspace: Path, tmp_path: Path
) -> None:
    home = home_with(tmp_path, AUDITOR)
    async with serve_model_server(answer) as server:
        env = corral_env(home, server.base_url)
        result = await run_corral(["exec", "--role", "auditor", "audit"], env=env, cwd=workspace)
        (sent,) = [r["normalised"] for r in server.requests]
    assert result.code == 0, result.stderr
    general = base_instructions("audit-model", "general", "pragmatic")
    assert sent["instructions"] == (
        f"{general.rstrip()}\n\n# Your role: auditor\n\nList every licence you find.\n"
    )
    assert sent["model"] == "audit-model"
    assert "## Sandbox: read-only" in texts(sent)[0][1]


async def test_exec_with_an_unknown_role_exits_2_naming_the_roles_it_knows(
    workspace: Path, tmp_path: Path
) -> None:
    home = home_with(tmp_path, AUDITOR)
    env = corral_env(home, "http://127.0.0.1:9/v1")
    result = await run_corral(["exec", "--role", "wizard", "audit"], env=env, cwd=workspace)
    assert result.code == 2
    assert result.stderr.strip().endswith(
        "unknown role 'wizard'; choose one of: general, supervisor, reviewer, refactorer, "
        "triager, auditor"
    )
    assert "Traceback" not in result.stderr


async def test_a_supervisors_worker_of_a_config_role_runs_with_the_roles_part(
    workspace: Path, tmp_path: Path
) -> None:
    home = home_with(tmp_path, AUDITOR)
    script = Supervise({"spawn-a": {"message": "audit src", "role": "auditor"}}, "audited")
    async with serve_model_server(script) as server:
        env = corral_env(home, server.base_url)
        argv = ["exec", "--role", "supervisor", "audit the repo"]
        result = await run_corral(argv, env=env, cwd=workspace)
        requests = [r["normalised"] for r in server.requests]
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "audited"
    (worker,) = [r for r in requests if is_worker(r)]
    assert worker["model"] == "audit-model"
    assert worker["instructions"].endswith("# Your role: auditor\n\nList every licence you find.\n")
    root = next(r for r in requests if not is_worker(r))
    role = next(t for t in root["tools"] if t["name"] == "spawn_agent")["parameters"]
    assert "auditor: checks licences" in role["properties"]["role"]["description"]


async def test_a_resumed_agent_of_a_config_role_keeps_its_instructions_after_the_config_changed(
    workspace: Path, tmp_path: Path
) -> None:
    home = home_with(tmp_path, AUDITOR)
    async with serve_model_server(answer) as server:
        env = corral_env(home, server.base_url)
        argv = ["exec", "--role", "auditor", "--run-id", "run-audit", "audit"]
        first = await run_corral(argv, env=env, cwd=workspace)
        assert first.code == 0, first.stderr
        home_with(tmp_path, AUDITOR.replace("List every licence", "Delete every licence"))
        second = await run_corral(["resume", "run-audit", "again"], env=env, cwd=workspace)
        started, resumed = (r["normalised"] for r in server.requests)
    assert second.code == 0, second.stderr
    assert resumed["instructions"] == started["instructions"]
    assert "Delete" not in resumed["instructions"]
