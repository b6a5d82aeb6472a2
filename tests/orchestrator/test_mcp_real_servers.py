"""The MCP manager against real third-party servers: `mcp-server-time` and `mcp-server-git` from
PyPI (2026-era SDK) and `@modelcontextprotocol/server-everything` from npm (2025-era SDK), over
stdio and streamable HTTP. `scripts/bootstrap` installs them.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

from corral.agents import McpServerConfig
from corral.orchestrator.services.mcp import ServerState, open_mcp_manager
from corral.tools import ToolOutput

from .mcp_servers import everything_js, python_server

pytestmark = pytest.mark.anyio
WAIT = 30.0


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one commit on `main`."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    path = tmp_path / "repo"
    path.mkdir()
    (path / "README.md").write_text("hello\n")
    for command in (["init", "-q", "-b", "main"], ["add", "README.md"], ["commit", "-qm", "first"]):
        subprocess.run(["git", *command], cwd=path, env=env, check=True)
    return path


async def test_real_stdio_servers_list_their_tools_and_answer_calls(repo: Path) -> None:
    servers = {
        "time": python_server("mcp_server_time", "--local-timezone", "UTC"),
        "git": python_server("mcp_server_git", "--repository", str(repo)),
        "everything": McpServerConfig(command="node", args=(str(everything_js()), "stdio")),
    }
    async with open_mcp_manager(servers) as manager:
        status = {s.name: s for s in manager.statuses()}
        now = await manager.call("mcp__time__get_current_time", {"timezone": "UTC"})
        git = await manager.call("mcp__git__git_status", {"repo_path": str(repo)})
        echo = await manager.call("mcp__everything__echo", {"message": "hello"})
    assert all(s.state is ServerState.READY for s in status.values())
    assert status["time"].tools == ("mcp__time__convert_time", "mcp__time__get_current_time")
    assert {"mcp__git__git_status", "mcp__git__git_log", "mcp__git__git_diff_unstaged"} <= set(
        status["git"].tools
    )
    assert {"mcp__everything__echo", "mcp__everything__get-sum"} <= set(status["everything"].tools)
    assert status["time"].protocol_version == "2026-07-28"
    assert status["everything"].protocol_version == "2025-11-25"
    assert datetime.fromisoformat(json.loads(now.text)["datetime"]).utcoffset() == timedelta(0)
    assert git.success and "On branch main" in git.text
    assert echo == ToolOutput("Echo: hello")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def wait_for_line(process: Process, needle: str) -> None:
    assert process.stderr is not None
    seen = ""
    async for chunk in TextReceiveStream(process.stderr):
        seen += chunk
        if needle in seen:
            return
    pytest.fail(f"the server exited before saying {needle!r}: {seen}")


async def test_the_everything_server_works_over_streamable_http() -> None:
    port = free_port()
    env = {"PATH": os.environ["PATH"], "PORT": str(port)}
    command = ["node", str(everything_js()), "streamableHttp"]
    async with await anyio.open_process(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as server:
        try:
            with anyio.fail_after(WAIT):
                await wait_for_line(server, "listening on port")
            config = McpServerConfig(url=f"http://127.0.0.1:{port}/mcp")
            async with open_mcp_manager({"everything": config}) as manager:
                status = manager.status("everything")
                total = await manager.call("mcp__everything__get-sum", {"a": 2, "b": 3})
        finally:
            server.terminate()
    assert status.state is ServerState.READY and status.transport == "streamable_http"
    assert "mcp__everything__echo" in status.tools
    assert total == ToolOutput("The sum of 2 and 3 is 5.")
