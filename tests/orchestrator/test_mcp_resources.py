"""The MCP resource tools against a real server that offers resources (`server-everything`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import McpServerConfig
from corral.orchestrator.services.mcp import McpManager, open_mcp_manager, resource_tools
from corral.tools import PermissionProfile, ToolCall, ToolContext, ToolOutput, ToolRegistry

from .mcp_servers import dynamic_server, everything_js

pytestmark = pytest.mark.anyio
WAIT = 60.0


def everything() -> McpServerConfig:
    return McpServerConfig(command="node", args=(str(everything_js()), "stdio"))


async def use(manager: McpManager, tmp_path: Path, name: str, **arguments: Any) -> ToolOutput:
    registry = ToolRegistry(resource_tools(manager))
    ctx = ToolContext(cwd=tmp_path, profile=PermissionProfile())
    return await registry.dispatch(ToolCall("c1", name, json.dumps(arguments)), ctx)


async def test_an_agent_lists_the_resources_of_every_server_and_reads_one(tmp_path: Path) -> None:
    servers = {"everything": everything(), "plain": dynamic_server()}
    with anyio.fail_after(WAIT):
        async with open_mcp_manager(servers) as manager:
            listed = await use(manager, tmp_path, "list_mcp_resources")
            resources = json.loads(listed.text)["resources"]
            text = next(r for r in resources if r.get("mimeType", "").startswith("text/"))
            read = await use(
                manager, tmp_path, "read_mcp_resource", server="everything", uri=text["uri"]
            )
            templates = await use(manager, tmp_path, "list_mcp_resource_templates")
    assert listed.success, listed.text
    assert {r["server"] for r in resources} == {"everything"}, "plain offers no resources"
    assert read.success, read.text
    (contents,) = json.loads(read.text)["contents"]
    assert contents["uri"] == text["uri"] and contents["text"].strip()
    assert templates.success and json.loads(templates.text)["resourceTemplates"]
