"""Hostile calls of the MCP resource tools: unknown or spoofed server names, a cursor without
its server, URIs a server does not have, and a server that never started. Each is a failed
output that says what was wrong; none reaches another server or raises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents import McpServerConfig
from corral.orchestrator.services.mcp import open_mcp_manager

from .mcp_servers import dynamic_server
from .test_mcp_resources import use

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]
WAIT = 30.0


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("read_mcp_resource", {"server": "nope", "uri": "file:///etc/passwd"}, "no MCP server"),
        ("read_mcp_resource", {"server": "../plain", "uri": "x://y"}, "no MCP server"),
        ("read_mcp_resource", {"server": "plain ", "uri": "x://y"}, "no MCP server"),
        ("read_mcp_resource", {"server": "off", "uri": "x://y"}, "no MCP server"),
        ("read_mcp_resource", {"server": "broken", "uri": "x://y"}, "not available"),
        ("read_mcp_resource", {"server": "plain", "uri": "file:///etc/passwd"}, "refused"),
        ("list_mcp_resources", {"cursor": "abc"}, "give `server` too"),
        ("list_mcp_resources", {"server": "plain", "cursor": "\u0000" * 64}, "refused"),
        ("list_mcp_resource_templates", {"server": "mcp__plain__"}, "no MCP server"),
    ],
)
async def test_a_hostile_resource_call_fails_with_a_reason(
    tmp_path: Path, tool: str, arguments: dict[str, Any], says: str
) -> None:
    servers = {
        "plain": dynamic_server(),
        "off": dynamic_server(enabled=False),
        "broken": McpServerConfig(command=str(tmp_path / "missing-server")),
    }
    with anyio.fail_after(WAIT):
        async with open_mcp_manager(servers) as manager:
            out = await use(manager, tmp_path, tool, **arguments)
    assert not out.success
    assert says in out.text, out.text


async def test_listing_everything_names_the_servers_that_could_not_answer(tmp_path: Path) -> None:
    servers = {"plain": dynamic_server(), "broken": McpServerConfig(command=str(tmp_path / "no"))}
    with anyio.fail_after(WAIT):
        async with open_mcp_manager(servers) as manager:
            out = await use(manager, tmp_path, "list_mcp_resources")
    answer = json.loads(out.text)
    assert answer["resources"] == []
    assert "broken" in answer["unavailable"]
