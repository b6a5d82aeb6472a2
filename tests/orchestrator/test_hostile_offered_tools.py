"""Tools an agent could only be refused are never offered: a model cannot call what its
request does not carry, and a call to it anyway is answered as an unknown tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.agents import AgentsConfig, AgentSpec, CorralConfig
from corral.orchestrator._run import AgentServices, assemble_agent
from corral.orchestrator.runs import build_root_spec
from corral.tools import (
    HostAbilities,
    PermissionProfile,
    SandboxMode,
    ToolCall,
    ToolContext,
)

pytestmark = pytest.mark.hostile

LIMITS = AgentsConfig(max_depth=2, max_threads=3)


def _spec(tmp_path: Path, sandbox: SandboxMode, network: bool = False) -> AgentSpec:
    config = CorralConfig(home=tmp_path / "home", base_url="http://127.0.0.1:9/v1")
    spec = build_root_spec(config, cwd=tmp_path, env={}, run_id="run-1")
    profile = PermissionProfile(sandbox=sandbox, network=network)
    return spec.model_copy(update={"profile": profile})


@pytest.mark.parametrize(
    ("sandbox", "host", "absent"),
    [
        (SandboxMode.READ_ONLY, HostAbilities(sandbox=True), "apply_patch"),
        (SandboxMode.READ_ONLY, HostAbilities(sandbox=False), "apply_patch"),
        (SandboxMode.READ_ONLY, HostAbilities(sandbox=False), "shell"),
        (SandboxMode.WORKSPACE_WRITE, HostAbilities(sandbox=False), "shell"),
    ],
)
@pytest.mark.anyio
async def test_a_withheld_tool_is_neither_offered_nor_callable(
    tmp_path: Path, sandbox: SandboxMode, host: HostAbilities, absent: str
) -> None:
    spec = _spec(tmp_path, sandbox)
    agent = assemble_agent(spec, AgentServices(agents=LIMITS, providers={}, host=host))
    assert absent not in [tool["name"] for tool in agent.core.config.tools]
    ctx = ToolContext(cwd=tmp_path, profile=spec.profile)
    patch = "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n"
    arguments = json.dumps({"command": ["true"], "input": patch})
    out = await agent.registry.dispatch(ToolCall("c1", absent, arguments), ctx)
    assert not out.success
    assert out.text.startswith(f"unknown tool {absent!r}")
    assert not (tmp_path / "x.txt").exists()
