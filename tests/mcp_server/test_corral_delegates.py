"""corral's own agent, given corral's MCP server as an `[mcp_servers]` entry, delegates a
fan-out to it and reports the results: two corral processes, one journal, the scripted model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import serve_model_server

from .._scripted import call, outputs
from ..e2e._cli import corral_env, run_corral
from ..service._harness import SCHEMA, TEMPLATE, reporter

pytestmark = pytest.mark.anyio

COUNT = 6
FANOUT = "mcp__corral__corral_fanout"
RESULTS = "mcp__corral__corral_results"


def delegating(request: dict[str, Any]) -> Any:
    """Fan-out workers report; the delegating agent starts the fan-out over MCP, waiting for
    it, then pages its results and answers with them."""
    if "report_result" in [tool["name"] for tool in request["tools"]]:
        return reporter(request)
    done = list(outputs(request).values())
    if not done:
        items = [{"n": n} for n in range(COUNT)]
        args = {"items": items, "template": TEMPLATE, "result_schema": SCHEMA, "wait_seconds": 60}
        return [call("start", FANOUT, args)]
    answer = json.loads(done[-1].splitlines()[0])
    if len(done) == 1:
        return [call("read", RESULTS, {"run_id": answer["run_id"]})]
    found = [row["result"]["n"] for row in answer["results"]]
    return f"the delegated fan-out found {found}"


def server_entry() -> list[str]:
    """`-c` settings that give this one command corral's MCP server (its runs do not get it)."""
    settings = {
        "command": json.dumps(sys.executable),
        "args": json.dumps(["-m", "corral", "mcp-server"]),
        "env_vars": json.dumps(["CORRAL_HOME", "CORRAL_BASE_URL", "PYTHONPATH"]),
    }
    return [
        arg
        for key, value in settings.items()
        for arg in ("-c", f"mcp_servers.corral.{key}={value}")
    ]


async def test_corrals_agent_delegates_a_fanout_to_corrals_mcp_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with serve_model_server(delegating) as model:
        result = await run_corral(
            ["exec", *server_entry(), "fan these out and tell me what they found"],
            env=corral_env(home, model.base_url),
            cwd=tmp_path,
            deadline=120,
        )
        ran = await run_corral(["runs", "--json"], env=corral_env(home), cwd=tmp_path)
    assert result.code == 0, result.stderr
    expected = [n * 10 for n in range(COUNT)]
    assert f"the delegated fan-out found {expected}" in result.stdout
    kinds = sorted(run["kind"] for run in json.loads(ran.stdout)) if ran.code == 0 else []
    assert kinds == ["exec", "fanout"], ran.stdout + ran.stderr
