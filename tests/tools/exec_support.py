"""Shared pieces of the interactive-session tests: a tool context with sessions, a call helper,
and the script of a process that answers each line it reads."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

from corral.tools import (
    ExecSessions,
    PermissionProfile,
    ToolCall,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    ToolServices,
    build_core_registry,
)

from .sandbox_support import PYTHON

# Answers "answer:<line>" to each line it reads, for up to 30 s, then exits; the marker in its
# argv lets a test find it in /proc.
ANSWERER = (
    "import sys, time; print('ready', flush=True); end = time.monotonic() + 30\n"
    "while time.monotonic() < end:\n"
    "    line = sys.stdin.readline()\n"
    "    if not line: break\n"
    "    print('answer:' + line.strip(), flush=True)\n"
)
_SESSION = re.compile(r"Process running with session ID (\d+)")


def answerer_command(marker: str) -> str:
    return shlex.join([PYTHON, "-c", ANSWERER, marker])


def registry() -> ToolRegistry:
    return build_core_registry(["exec_command", "write_stdin"])


def context(
    cwd: Path, profile: PermissionProfile, sessions: ExecSessions, agent_id: str = "agent-1"
) -> ToolContext:
    services = ToolServices(exec_sessions=sessions)
    return ToolContext(cwd=cwd, profile=profile, services=services, agent_id=agent_id)


async def call(reg: ToolRegistry, ctx: ToolContext, name: str, **arguments: Any) -> ToolOutput:
    return await reg.dispatch(ToolCall("c1", name, json.dumps(arguments)), ctx)


def session_id(output: ToolOutput) -> int:
    match = _SESSION.search(output.text)
    assert match is not None, output.text
    return int(match.group(1))


def processes_with_arg(marker: str) -> list[int]:
    """Live processes whose command line contains `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found
