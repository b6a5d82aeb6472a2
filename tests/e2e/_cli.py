"""Running the real `corral` command as a subprocess, with a deadline, for end-to-end tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

COMMAND_DEADLINE = 60.0


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def corral_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "corral", *args]


def corral_env(home: Path, base_url: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORRAL_", "OPENAI_"))}
    env["CORRAL_HOME"] = str(home)
    if base_url is not None:
        env["CORRAL_BASE_URL"] = base_url
    env.update(extra)
    return env


async def run_corral(
    args: Sequence[str], *, env: Mapping[str, str], cwd: Path, deadline: float = COMMAND_DEADLINE
) -> Result:
    with anyio.fail_after(deadline):
        done = await anyio.run_process(
            corral_argv(*args), env=dict(env), cwd=cwd, check=False, stdin=subprocess.DEVNULL
        )
    return Result(done.returncode, done.stdout.decode(), done.stderr.decode())
