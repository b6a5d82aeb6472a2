"""An MCP server that cannot start is reported with what it said on stderr, not a protocol code."""

from __future__ import annotations

import sys

import pytest

from corral.agents import McpServerConfig
from corral.orchestrator.services.mcp import ServerState, open_mcp_manager

pytestmark = pytest.mark.anyio

COMPLAINS_AND_EXITS = """
import sys
for line in ("starting docs server v2", "reading settings", "fatal: DOCS_TOKEN is not set"):
    print(line, file=sys.stderr, flush=True)
sys.exit(3)
"""
COMPLAINS_AND_HANGS = """
import sys, time
print("waiting for the database at db:5432", file=sys.stderr, flush=True)
time.sleep(3600)
"""


async def test_a_server_that_exits_at_startup_is_reported_with_its_last_stderr_lines() -> None:
    servers = {"docs": McpServerConfig(command=sys.executable, args=("-c", COMPLAINS_AND_EXITS))}
    async with open_mcp_manager(servers) as manager:
        status = manager.status("docs")
    assert status.state is ServerState.FAILED
    assert status.error is not None
    assert status.error.count("exit code 3") == 1, "how it exited is said once"
    assert status.error.count("its stderr ended with") == 1
    assert status.error.endswith(
        "its stderr ended with: starting docs server v2 | reading settings | "
        "fatal: DOCS_TOKEN is not set"
    )
    assert "-32000" not in status.error


async def test_a_silent_server_that_exits_at_startup_says_its_exit_code_once() -> None:
    servers = {"bad": McpServerConfig(command=sys.executable, args=("-c", "raise SystemExit(3)"))}
    async with open_mcp_manager(servers) as manager:
        status = manager.status("bad")
    assert status.state is ServerState.FAILED and status.error is not None
    assert status.error.count("exit code 3") == 1


async def test_a_server_that_hangs_at_startup_shows_what_it_said_before_the_timeout() -> None:
    servers = {
        "db": McpServerConfig(
            command=sys.executable, args=("-c", COMPLAINS_AND_HANGS), startup_timeout_sec=1
        )
    }
    async with open_mcp_manager(servers) as manager:
        status = manager.status("db")
    assert status.state is ServerState.FAILED
    assert status.error is not None
    assert status.error == (
        "did not start within 1 s (startup_timeout_sec); its stderr ended with: "
        "waiting for the database at db:5432"
    )
