"""MCP tools reach agents: offered directly below the threshold, found by `tool_search` above."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

TIME_TOOL = "mcp__time__get_current_time"


def write_config(home: Path, *, threshold: int) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f"tool_search_threshold = {threshold}\n"
        "[mcp_servers.time]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]\n'
    )


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["normalised"]["tools"]]


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    args = json.dumps(arguments)
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": args}


def ask_the_time(request: dict[str, Any]) -> Any:
    done = outputs(request)
    names = [t["name"] for t in request["tools"]]
    if TIME_TOOL in names and not any("datetime" in o for o in done):
        return [call(f"c{len(done)}", TIME_TOOL, {"timezone": "UTC"})]
    if TIME_TOOL not in names and not done:
        return [call("search", "tool_search", {"query": "current time in a timezone"})]
    return "the time is: " + done[-1]


async def test_an_agent_calls_an_mcp_tool_offered_directly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, threshold=100)
    async with serve_model_server(ask_the_time) as server:
        result = await run_corral(
            ["exec", "what time is it?"], env=corral_env(home, server.base_url), cwd=tmp_path
        )
        assert result.code == 0, result.stderr
        requests = list(server.requests)
    assert TIME_TOOL in tool_names(requests[0])
    assert "tool_search" not in tool_names(requests[0])
    assert '"datetime"' in result.stdout


async def test_above_the_threshold_an_agent_finds_the_tool_with_tool_search(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, threshold=0)
    async with serve_model_server(ask_the_time) as server:
        result = await run_corral(
            ["exec", "what time is it?"], env=corral_env(home, server.base_url), cwd=tmp_path
        )
        assert result.code == 0, result.stderr
        first, second, *_ = server.requests
    assert "tool_search" in tool_names(first) and TIME_TOOL not in tool_names(first)
    assert tool_names(second)[: len(tool_names(first))] == tool_names(first), "appended only"
    assert TIME_TOOL in tool_names(second)
    assert '"datetime"' in result.stdout
