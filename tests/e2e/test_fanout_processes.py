"""`corral fanout --processes 2` killed or stopped in the middle, with real processes: a worker
process SIGKILLed (the run hands its items on and finishes every item exactly once), a worker
process SIGSTOPped (alive but silent: the parent kills it once its heartbeat is overdue, while a
worker busy in a long tool call lives on), the parent SIGKILLed, the parent sent SIGTERM (no
worker process outlives its parent, and `corral resume` then finishes every item exactly once).

Each item appends its number to `witness.txt` with one shell call, then reports it
(`benchmarks.kill_resume.step`; and, as a model would, it checks the file before repeating a
shell call it is told was aborted by a stopped run, and reports again after an aborted report).
The server holds the requests that follow a shell call until three items wait there: each
process runs at most two items at once, so both are busy and three witness lines are written
when the signal comes.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream, Process

from benchmarks.kill_resume import prepare, results, step, witness
from corral.orchestrator.model_server import serve_model_server

from ._cli import corral_argv, corral_env, run_corral

# Three corral processes per test, each importing corral: seconds each on a busy machine.
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]
WAIT = 90.0
ITEMS = 8
HELD = 3
_ITEM = re.compile(r"Item (\d+):")
ARGS = (
    *("fanout", "--run-id", "run-p", "--items", "items.jsonl", "--schema", "schema.json"),
    *("--template", "Item {n}: append {n} to the witness, then report {n}."),
    *("--concurrency", "4", "--processes", "2"),
)


ABORTED = "aborted"
"""How a call that a stopped run never finished is answered when the run carries on."""


def call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function_call", "name": name, "arguments": json.dumps(arguments)}]


def careful_step(request: dict[str, Any]) -> Any:
    """`step`, but as a model told a call was aborted (a stop, not a kill, ended the run): a
    shell call is checked before it is repeated, a report is made again."""
    items = request["input"]
    outputs = {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}
    calls = [i for i in items if i.get("type") == "function_call"]
    last = calls[-1] if calls else None
    if last is not None and outputs.get(last["call_id"], "").startswith(ABORTED):
        n = int(_ITEM.findall(json.dumps(items))[-1])
        if last["name"] == "shell":
            check = f"grep -qx {n} witness.txt || echo {n} >> witness.txt"
            return call("shell", {"command": check})
        return call("report_result", {"n": n})
    return step(request)


class HoldAfterShell:
    """`step`, but the requests after a shell call wait until `HELD` items have made one, and
    then until `release` (so the signal lands with work in flight in both processes)."""

    def __init__(self) -> None:
        self.held: set[int] = set()
        self.all_held = anyio.Event()
        self.release = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        calls = [i for i in request["input"] if i.get("type") == "function_call"]
        if not self.release.is_set() and calls and calls[-1]["name"] == "shell":
            self.held.add(int(_ITEM.findall(json.dumps(request["input"]))[-1]))
            if len(self.held) >= HELD:
                self.all_held.set()
            with anyio.fail_after(WAIT):
                await self.release.wait()
        return careful_step(request)


def worker_pids(parent: int) -> list[int]:
    """The fan-out's worker processes: the children of `parent` running `_procs`."""
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return [
        int(pid)
        for pid in children
        if b"corral.orchestrator._procs" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]


async def exited(pidfd: int) -> None:
    """Wait until the process behind `pidfd` has ended (whoever its parent is now)."""
    with anyio.fail_after(WAIT):
        await anyio.wait_readable(pidfd)


async def start_fanout(workspace: Path, env: dict[str, str]) -> Process:
    return await anyio.open_process(
        corral_argv(*ARGS), env=env, cwd=workspace, stdin=subprocess.DEVNULL
    )


async def held_with_workers(policy: HoldAfterShell, process: Process) -> list[int]:
    """Wait for the hold; answer the worker processes' pidfds (one worker for `--processes 2`)."""
    with anyio.fail_after(WAIT):
        await policy.all_held.wait()
    pids = worker_pids(process.pid)
    assert len(pids) == 1, "the parent runs one share, one worker process the other"
    return [os.pidfd_open(pid) for pid in pids]


async def read_all(stream: ByteReceiveStream) -> str:
    """What the ended process wrote (a few lines: it all fits in the pipe)."""
    chunks: list[bytes] = []
    with anyio.fail_after(WAIT):
        async for chunk in stream:
            chunks.append(chunk)
    return b"".join(chunks).decode()


async def resume_to_the_end(workspace: Path, env: dict[str, str], *flags: str) -> None:
    argv = ["resume", "run-p", *flags]
    result = await run_corral(argv, env=env, cwd=workspace, deadline=WAIT)
    written = (workspace / "results.jsonl").read_text()
    assert result.code == 0, result.stderr + written
    assert results(workspace) == [(n, "done", {"n": n}) for n in range(ITEMS)]
    assert witness(workspace) == list(range(ITEMS)), "every item's shell call took effect once"


async def test_a_worker_process_killed_hands_its_items_on_and_the_run_finishes_each_once(
    tmp_path: Path,
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    prepare(workspace, ITEMS)
    policy = HoldAfterShell()
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        async with await start_fanout(workspace, env) as process:
            (worker,) = await held_with_workers(policy, process)
            os.kill(worker_pids(process.pid)[0], signal.SIGKILL)
            await exited(worker)
            os.close(worker)
            policy.release.set()
            with anyio.fail_after(WAIT):
                code = await process.wait()
            assert process.stderr is not None
            stderr = await read_all(process.stderr)
    written = (workspace / "results.jsonl").read_text()
    assert code == 0, stderr + written
    assert "Traceback" not in stderr
    # The killed process's items were carried on by the parent, from the journal, in the run.
    assert results(workspace) == [(n, "done", {"n": n}) for n in range(ITEMS)]
    assert witness(workspace) == list(range(ITEMS)), "every item's shell call took effect once"


HEARTBEAT_TIMEOUT = 5
"""Seconds of silence after which the parent kills a worker process (six beats' worth)."""
BUSY = 6
"""Items at once with `--processes 3 --concurrency 6`: two in each of the three processes."""
WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done"


class BusyInShell:
    """Each item's first call is a shell command that writes its witness line, then runs until
    the test creates `go` (a tool call as long as the test likes); then as `careful_step`."""

    def __init__(self) -> None:
        self.started: set[int] = set()
        self.all_busy = anyio.Event()

    def __call__(self, request: dict[str, Any]) -> Any:
        if any(i.get("type") == "function_call" for i in request["input"]):
            return careful_step(request)
        n = int(_ITEM.findall(json.dumps(request["input"]))[-1])
        self.started.add(n)
        if len(self.started) >= BUSY:
            self.all_busy.set()
        command = f"echo {n} >> witness.txt && {WAIT_FOR_GO}"
        return call("shell", {"command": command, "timeout_ms": 300_000})


def has_exited(pidfd: int) -> bool:
    return bool(select.select([pidfd], [], [], 0)[0])


async def test_a_silent_worker_process_is_killed_and_a_busy_one_is_not(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    prepare(workspace, ITEMS + 1)
    policy = BusyInShell()
    args = [*ARGS[:-4], "--concurrency", str(BUSY), "--processes", "3"]
    args += ["-c", f"agents.fanout_heartbeat_timeout_sec={HEARTBEAT_TIMEOUT}"]
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        argv = corral_argv(*args)
        async with await anyio.open_process(
            argv, env=env, cwd=workspace, stdin=subprocess.DEVNULL
        ) as process:
            with anyio.fail_after(WAIT):
                await policy.all_busy.wait()
            stopped, busy = worker_pids(process.pid)
            pidfds = os.pidfd_open(stopped), os.pidfd_open(busy)
            os.kill(stopped, signal.SIGSTOP)
            # No signal but the parent's SIGKILL ends it: it went silent, so it was killed.
            await exited(pidfds[0])
            # It went silent for the whole timeout while the other was in its tool call.
            assert not has_exited(pidfds[1]), "a worker busy in a long tool call lives on"
            (workspace / "go").touch()
            with anyio.fail_after(WAIT):
                code = await process.wait()
            for pidfd in pidfds:
                os.close(pidfd)
            assert process.stderr is not None
            stderr = await read_all(process.stderr)
    written = (workspace / "results.jsonl").read_text()
    assert code == 0, stderr + written
    assert "Traceback" not in stderr
    assert f"went silent for {HEARTBEAT_TIMEOUT} s" in stderr
    assert stderr.count("went silent") == 1, "only the stopped worker was killed"
    assert results(workspace) == [(n, "done", {"n": n}) for n in range(ITEMS + 1)]
    assert witness(workspace) == list(range(ITEMS + 1)), "every item's shell call took effect once"


@pytest.mark.parametrize("stopped", [False, True], ids=["running", "stopped"])
async def test_the_parent_killed_takes_its_workers_down_and_resume_finishes_every_item_once(
    tmp_path: Path, stopped: bool
) -> None:
    """A worker stopped with SIGSTOP when its parent dies is woken by the kernel (SIGCONT, its
    parent-death signal), finds its channel closed and stops like a running one."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    prepare(workspace, ITEMS)
    policy = HoldAfterShell()
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        async with await start_fanout(workspace, env) as process:
            (worker,) = await held_with_workers(policy, process)
            if stopped:
                os.kill(worker_pids(process.pid)[0], signal.SIGSTOP)
            process.kill()
            await exited(worker)  # no orphan: the worker saw its channel close and exited
            os.close(worker)
            policy.release.set()
            with anyio.fail_after(WAIT):
                await process.wait()
        # A resumed fan-out runs in several processes by the same machinery.
        await resume_to_the_end(workspace, env, "--processes", "2")


async def test_sigterm_stops_the_workers_before_the_parent_exits(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    prepare(workspace, ITEMS)
    policy = HoldAfterShell()
    async with serve_model_server(policy) as server:
        env = corral_env(home, server.base_url)
        async with await start_fanout(workspace, env) as process:
            (worker,) = await held_with_workers(policy, process)
            process.terminate()
            with anyio.fail_after(WAIT):
                code = await process.wait()
            policy.release.set()
            with anyio.fail_after(1.0):  # already gone: the parent waited for it
                await exited(worker)
            os.close(worker)
        assert code == 143
        await resume_to_the_end(workspace, env)


async def test_resume_refuses_processes_for_a_run_that_is_not_a_fanout(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    env = corral_env(home, "http://127.0.0.1:9/v1")
    result = await run_corral(
        ["resume", "run-none", "--processes", "2"], env=env, cwd=workspace, deadline=WAIT
    )
    assert result.code == 2, result.stderr
    assert "drop --processes" in result.stderr and "Traceback" not in result.stderr
