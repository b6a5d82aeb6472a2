"""MCP progress notifications keep a long tool call alive, against a real server.

`@modelcontextprotocol/server-everything`'s long-running tool reports progress at each step when
the request carries a progress token; corral asks for one, and each notification restarts the
call's `tool_timeout_sec`.
"""

from __future__ import annotations

import logging

import pytest

from corral.agents import McpServerConfig
from corral.orchestrator.services.mcp import open_mcp_manager

from .mcp_servers import everything_js

pytestmark = pytest.mark.anyio

LONG = "mcp__everything__trigger-long-running-operation"


def everything(tool_timeout_sec: float) -> dict[str, McpServerConfig]:
    config = McpServerConfig(
        command="node", args=(str(everything_js()), "stdio"), tool_timeout_sec=tool_timeout_sec
    )
    return {"everything": config}


async def test_a_call_that_reports_progress_outlives_its_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="corral.orchestrator.services.mcp")
    async with open_mcp_manager(everything(tool_timeout_sec=1.5)) as manager:
        # 3 s in all, a step (and a progress notification) every 0.5 s.
        output = await manager.call(LONG, {"duration": 3, "steps": 6})
    assert output.success, output.text
    assert "Long running operation completed" in output.text
    steps = [
        r.getMessage()
        for r in caplog.records
        if "trigger-long-running-operation at" in r.getMessage()
    ]
    assert steps[-1].endswith("at 6/6")


async def test_a_call_silent_past_its_timeout_still_times_out() -> None:
    async with open_mcp_manager(everything(tool_timeout_sec=1.0)) as manager:
        # One step of 3 s: the first notification would come too late.
        output = await manager.call(LONG, {"duration": 3, "steps": 1})
    assert not output.success
    assert "timed out after 1 s without progress (tool_timeout_sec" in output.text
