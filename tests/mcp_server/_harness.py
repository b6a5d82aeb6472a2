"""corral's MCP server in front of the scripted model server, for the tests: in process (the
SDK's in-memory transport, through the official client)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client

from corral.agents import CorralConfig, ServiceConfig
from corral.orchestrator.mcp_server import McpServerOptions, open_mcp_server, server_policy
from corral.orchestrator.model_server import Policy, serve_model_server
from corral.orchestrator.service import ServiceLimits
from corral.tools import SandboxMode

from ..service._harness import SCHEMA, TEMPLATE

WAIT = 30.0


@dataclass
class Served:
    client: Client
    model_url: str
    home: Path
    cwd: Path


def fanout_args(count: int, **fields: Any) -> dict[str, Any]:
    """`corral_fanout` arguments over items n = 0..count-1."""
    items = [{"n": n} for n in range(count)]
    return {"items": items, "template": TEMPLATE, "result_schema": SCHEMA, **fields}


def answer(result: types.CallToolResult) -> dict[str, Any]:
    """The tool's JSON answer; fails with its text if the call was refused."""
    text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
    assert not result.is_error, text
    found: dict[str, Any] = json.loads(text)
    return found


def refusal(result: types.CallToolResult) -> str:
    """The one line a refused call answers with."""
    assert result.is_error, result
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


@asynccontextmanager
async def open_served(
    tmp_path: Path,
    policy: Policy,
    *,
    service: ServiceConfig | None = None,
    limits: ServiceLimits | None = None,
    sandbox_mode: SandboxMode = SandboxMode.WORKSPACE_WRITE,
    client: dict[str, Any] | None = None,
) -> AsyncIterator[Served]:
    """The server as `corral mcp-server` makes it in `tmp_path`, with the server's own config
    saying `sandbox_mode` and `service` (default: folders under `tmp_path` allowed); `client`
    holds the official client's options (its protocol `mode`, a `message_handler`)."""
    home = tmp_path / "home"
    async with serve_model_server(policy) as model:
        own = CorralConfig(
            base_url=model.base_url,
            service=service or ServiceConfig(allowed_roots=(tmp_path,)),
            home=home,
            sandbox_mode=sandbox_mode,
        )
        options = McpServerOptions(
            home=home,
            limits=limits or ServiceLimits(),
            env={"CORRAL_HOME": str(home), "CORRAL_BASE_URL": model.base_url},
            policy=server_policy(own, tmp_path),
        )
        async with open_mcp_server(options) as server, Client(server, **(client or {})) as mcp:
            yield Served(mcp, model.base_url, home, tmp_path)
