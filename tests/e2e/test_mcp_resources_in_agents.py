"""An agent lists the resources of a real MCP server (`server-everything`) and reads one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server

from .._scripted import call
from ..orchestrator.mcp_servers import everything_js
from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def reader(request: dict[str, Any]) -> Any:
    """Lists the resources, reads the first text one, then answers with what it read."""
    done = outputs(request)
    if not done:
        return [call("c1", "list_mcp_resources", {})]
    if len(done) == 1:
        listed = json.loads(done[0])["resources"]
        first = next(r for r in listed if r.get("mimeType", "").startswith("text/"))
        return [call("c2", "read_mcp_resource", {"server": first["server"], "uri": first["uri"]})]
    (contents, *_) = json.loads(done[1])["contents"]
    return "read " + contents["uri"]


async def test_an_agent_lists_and_reads_a_resource_of_a_real_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        "[mcp_servers.everything]\n"
        'command = "node"\n'
        f'args = [{json.dumps(str(everything_js()))}, "stdio"]\n'
    )
    async with serve_model_server(reader) as server:
        env = corral_env(home, server.base_url)
        result = await run_corral(["exec", "read a resource"], env=env, cwd=tmp_path)
        first = server.requests[0]["body"]
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("read demo://")
    names = [tool["name"] for tool in first["tools"]]
    assert {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"} <= set(names)
