"""`assemble_agent`: one agent's registry and core, as both executors build them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.agents import AgentsConfig, AgentSpec, CorralConfig
from corral.orchestrator._run import AgentServices, ToolScope, assemble_agent
from corral.orchestrator.runs import build_root_spec
from corral.orchestrator.supervisor import COLLAB_TOOL_NAMES, collab_tool_providers
from corral.tools import (
    InvalidInput,
    PermissionProfile,
    ToolCall,
    ToolContext,
    ToolRegistry,
    function_tool,
)

LIMITS = AgentsConfig(max_depth=2, max_threads=3)


def _spec(tmp_path: Path, extra: tuple[str, ...]) -> AgentSpec:
    config = CorralConfig(home=tmp_path / "home", base_url="http://127.0.0.1:9/v1")
    return build_root_spec(
        config, cwd=tmp_path, env={}, run_id="run-1", role="supervisor", extra_tools=extra
    )


def test_the_core_tools_come_first_then_the_runs_own_tools_then_the_shared_ones(
    tmp_path: Path,
) -> None:
    def search(query: str) -> str:
        """Find a tool."""
        return query

    def equip(registry: ToolRegistry) -> None:
        registry.register(function_tool(name="tool_search")(search))

    spec = _spec(tmp_path, COLLAB_TOOL_NAMES)
    services = AgentServices(agents=LIMITS, providers=collab_tool_providers(), equip=equip)
    agent = assemble_agent(spec, services)
    names = agent.registry.names
    assert names[-1] == "tool_search"
    assert names[-1 - len(COLLAB_TOOL_NAMES) : -1] == list(COLLAB_TOOL_NAMES)
    assert [t["name"] for t in agent.core.config.tools] == names


def test_a_tool_the_run_cannot_provide_is_refused_with_its_name(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ("report_result",))
    with pytest.raises(InvalidInput, match="needs tool 'report_result'; this run lacks it"):
        assemble_agent(spec, AgentServices(agents=LIMITS, providers={}))


@pytest.mark.anyio
async def test_a_collab_tool_built_only_for_its_schema_refuses_to_run(tmp_path: Path) -> None:
    scope = ToolScope(agent_id="agent-1", agents=LIMITS)
    registry = ToolRegistry([collab_tool_providers()["list_agents"](scope)])
    ctx = ToolContext(cwd=tmp_path, profile=PermissionProfile())
    out = await registry.dispatch(ToolCall("c1", "list_agents", json.dumps({})), ctx)
    assert not out.success
    assert out.text == "the collab tools run in the agent's workflow, not on its host"
