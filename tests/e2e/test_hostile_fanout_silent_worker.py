"""A model whose commands stop the fan-out worker process that runs them, in full access (where
a command can reach its worker): the worker is alive but silent, and the run must not wait for
it for ever. Its parent kills it once its heartbeat is overdue and hands its items on; every item
ends done, each shell call's effect once.

The command stops its parent only when that is a worker process (its command line says so), so
the items carried on in `corral`'s own process run it harmlessly.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from benchmarks.kill_resume import prepare, results, step, witness
from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_argv, corral_env

pytestmark = [pytest.mark.anyio, pytest.mark.hostile, pytest.mark.timeout(240)]
WAIT = 90.0
ITEMS = 6
TOGETHER = 3
_ITEM = re.compile(r"Item (\d+):")
IN_A_WORKER = "grep -q corral.orchestrator._procs /proc/$PPID/cmdline"
STOPS = {
    "its process": f"{IN_A_WORKER} && kill -STOP $PPID",
    "its process group": f"{IN_A_WORKER} && kill -STOP -- -$PPID",
}


class StopsItsWorker:
    """Each item's first call stops the worker process running it, then writes the witness.
    The first requests wait until `TOGETHER` items have asked: this process runs at most 2 at
    once, so the worker process has one."""

    def __init__(self, stop: str) -> None:
        self.stop = stop
        self.seen: set[int] = set()
        self.all_in = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        if any(i.get("type") == "function_call" for i in request["input"]):
            return step(request)
        n = int(_ITEM.findall(json.dumps(request["input"]))[-1])
        self.seen.add(n)
        if len(self.seen) >= TOGETHER:
            self.all_in.set()
        with anyio.fail_after(WAIT):
            await self.all_in.wait()
        command = f"{{ {self.stop}; }} ; echo {n} >> witness.txt"
        arguments = json.dumps({"command": command})
        return [{"type": "function_call", "name": "shell", "arguments": arguments}]


@pytest.mark.parametrize("stop", STOPS.values(), ids=STOPS.keys())
async def test_a_command_that_stops_its_worker_process_does_not_hang_the_run(
    tmp_path: Path, stop: str
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    prepare(workspace, ITEMS)
    args = (
        *("fanout", "--run-id", "run-s", "--items", "items.jsonl", "--schema", "schema.json"),
        *("--template", "Item {n}: append {n} to the witness, then report {n}."),
        *("--concurrency", "4", "--processes", "2", "--sandbox", "full-access"),
        *("-c", "agents.fanout_heartbeat_timeout_sec=5"),
    )
    async with serve_model_server(StopsItsWorker(stop)) as server:
        with anyio.fail_after(WAIT):
            done = await anyio.run_process(
                corral_argv(*args),
                env=corral_env(home, server.base_url),
                cwd=workspace,
                check=False,
                stdin=subprocess.DEVNULL,
            )
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    assert "went silent for 5 s (no heartbeat) and was killed" in stderr
    assert "Traceback" not in stderr
    assert results(workspace) == [(n, "done", {"n": n}) for n in range(ITEMS)]
    assert witness(workspace) == list(range(ITEMS)), "every item's shell call took effect once"
