"""How the `corral` program leaves: after a command that reached Temporal, its exit handlers
run and its output is flushed, then it leaves without the interpreter's teardown, where the
Temporal client's native threads could abort it after the answer was printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DEADLINE = 60
# Runs the program as `python -m corral` does, with the Temporal bridge's module seen as loaded
# (a stand-in: the real one starts native threads), an exit handler, and an object that says
# when the interpreter's teardown collects it.
PROGRAM = """
import atexit, sys, types
if sys.argv[1] == "temporal":
    sys.modules["temporalio.bridge.temporal_sdk_bridge"] = types.ModuleType("bridge")
atexit.register(lambda: print("exit handlers ran", flush=True))
class Witness:
    def __del__(self):
        print("torn down", flush=True)
witness = Witness()
sys.argv = ["corral", "skills", "list", "--json"]
from corral.orchestrator.cli import console
print("answer", end="\\n")
console()
"""


def run(mode: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {"CORRAL_HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, mode],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        env=env,
        cwd=home,
        check=False,
    )


@pytest.mark.parametrize("mode", ["temporal", "plain"])
def test_the_program_runs_its_exit_handlers_flushes_and_keeps_the_commands_code(
    mode: str, tmp_path: Path
) -> None:
    done = run(mode, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "answer"
    assert "exit handlers ran" in lines
    assert "[" in done.stdout  # the command's own JSON, flushed before leaving
    # After Temporal, no teardown; otherwise the ordinary one.
    assert ("torn down" in lines) is (mode == "plain")
