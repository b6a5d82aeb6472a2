"""A third-party MCP client, the MCP Inspector's command-line mode (installed by
`scripts/bootstrap` under `.mcp-servers/inspector`, run offline), lists corral's tools with its
schema-portability check on and calls `corral_runs`, over stdio and over HTTP with the token."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from ..e2e._cli import corral_env
from ..service._harness import TOKEN
from .test_transports import http_server

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / ".mcp-servers" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"
DEADLINE = 120.0

needs_inspector = pytest.mark.skipif(
    not INSPECTOR.exists(), reason=f"needs {INSPECTOR} (run scripts/bootstrap)"
)


async def inspect(tmp_path: Path, target: list[str], *options: str) -> Any:
    """Run the Inspector's CLI on `target`; its JSON answer (the test fails on a non-zero exit)."""
    env = corral_env(
        tmp_path / "home",
        MCP_CATALOG_PATH=str(tmp_path / "catalog.json"),  # not the user's ~/.mcp-inspector
        npm_config_offline="true",
    )
    argv = [str(INSPECTOR), "--cli", *options, *target]
    with anyio.fail_after(DEADLINE):
        done = await anyio.run_process(
            argv, env=env, cwd=tmp_path, check=False, stdin=subprocess.DEVNULL
        )
    assert done.returncode == 0, done.stderr.decode() + done.stdout.decode()
    return json.loads(done.stdout)


def stdio_target(tmp_path: Path) -> list[str]:
    home = corral_env(tmp_path / "home")
    passed = [
        arg
        for name in ("CORRAL_HOME", "PYTHONPATH")
        if name in home
        for arg in ("-e", f"{name}={home[name]}")
    ]
    return [*passed, sys.executable, "-m", "corral", "mcp-server"]


@needs_inspector
async def test_the_inspector_lists_corrals_tools_with_portable_schemas(tmp_path: Path) -> None:
    listed = await inspect(tmp_path, stdio_target(tmp_path), "--strict", "--method", "tools/list")
    names = [tool["name"] for tool in listed["tools"]]
    assert names == [
        "corral_fanout",
        "corral_review",
        "corral_triage",
        "corral_exec",
        "corral_status",
        "corral_results",
        "corral_cancel",
        "corral_runs",
    ]
    assert all(t["inputSchema"]["additionalProperties"] is False for t in listed["tools"])


@needs_inspector
async def test_the_inspector_calls_corral_runs_over_stdio(tmp_path: Path) -> None:
    called = await inspect(
        tmp_path,
        stdio_target(tmp_path),
        "--method",
        "tools/call",
        "--tool-name",
        "corral_runs",
        "--tool-arg",
        "limit=5",
    )
    assert called["isError"] is False
    assert called["structuredContent"] == {"runs": []}


@needs_inspector
async def test_the_inspector_calls_corral_runs_over_http_with_the_token(tmp_path: Path) -> None:
    async with http_server(tmp_path, "http://127.0.0.1:9/v1") as url:
        called = await inspect(
            tmp_path,
            [url],
            "--header",
            f"Authorization: Bearer {TOKEN}",
            "--method",
            "tools/call",
            "--tool-name",
            "corral_runs",
        )
    assert called["structuredContent"] == {"runs": []}
