"""What a plain run leaves unimported: what is not configured is not loaded (nor kept in memory).

Each check runs a real `corral.run_agents` in a fresh interpreter, against the scripted model
server in the same process, and lists the heavy packages that ended up in `sys.modules`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, sys
from pathlib import Path

import anyio

import corral
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.model_server.examples import echo


def step(x: int) -> int:
    \"\"\"Add one.\"\"\"
    return x + 1


async def main(home: Path) -> None:
    async with serve_model_server(echo) as server:
        env = {"CORRAL_HOME": str(home), "HOME": str(home)}
        config = corral.load_config(home, env=env, model="m", base_url=server.base_url)
        outcomes = await corral.run_agents(["hi"], tools=[step], cwd=home, config=config, env={})
    loaded = sorted({name.split(".")[0] for name in sys.modules} | set(sys.modules))
    print(json.dumps([str(outcomes[0].finish.status), loaded]))


anyio.run(main, Path(sys.argv[1]))
"""
NOT_CONFIGURED = ("mcp", "opentelemetry.sdk", "openai", "numpy", "bm25s")
"""MCP (no server configured), the telemetry SDK (nothing exported), the model SDK (corral
posts through aiohttp), the skills matcher (no skills found)."""
RUN_TIMEOUT = 120


def test_a_plain_run_imports_no_mcp_telemetry_sdk_model_sdk_or_skills_matcher(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "CORRAL_"))}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    status, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert status == "completed"
    assert [name for name in NOT_CONFIGURED if name in loaded] == []
