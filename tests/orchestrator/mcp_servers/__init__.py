"""MCP servers the tests run as real processes: our own, and where to find the third-party ones."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from corral.agents import McpServerConfig

HERE = Path(__file__).parent
REPO = HERE.parents[2]
DYNAMIC_SERVER = HERE / "dynamic_server.py"
ANNOTATED_SERVER = HERE / "annotated_server.py"
EVERYTHING_JS = (
    REPO / ".mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)


def dynamic_server(**settings: Any) -> McpServerConfig:
    """Our test server (`dynamic_server.py`), run by this interpreter."""
    return McpServerConfig(command=sys.executable, args=(str(DYNAMIC_SERVER),), **settings)


def annotated_server(**settings: Any) -> McpServerConfig:
    """A server with a read-only, a destructive, an open-world and an unannotated tool."""
    return McpServerConfig(command=sys.executable, args=(str(ANNOTATED_SERVER),), **settings)


def everything_js() -> Path:
    if not EVERYTHING_JS.is_file():
        pytest.fail(f"{EVERYTHING_JS} is missing; run scripts/bootstrap to install it")
    return EVERYTHING_JS


def python_server(module: str, *args: str) -> McpServerConfig:
    """A PyPI MCP server installed in this venv, run as `python -m module`."""
    try:
        __import__(module)
    except ImportError:
        pytest.fail(f"{module} is not installed; run scripts/bootstrap to install it")
    return McpServerConfig(command=sys.executable, args=("-m", module, *args))
