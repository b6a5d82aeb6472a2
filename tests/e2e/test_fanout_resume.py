"""A `corral fanout` killed at several points, then `corral resume RUN`: every item done once.

Each worker appends its item's number to a witness file with one shell call, reports the number
and answers one line. The policy reaches each kill point deterministically: once armed, every
request it gets stalls, and the test kills only when every worker is stalled (or, for the kill
while a tool runs, blocked on a FIFO). A tool call is never run twice: the witness shows it.
"""

from __future__ import annotations

import json
import os
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from corral.agents import open_sqlite_store
from corral.orchestrator.model_server import serve_model_server
from tests._fanout import fanout_workspace

from ._cli import corral_argv, corral_env, run_corral

pytestmark = pytest.mark.anyio

WAIT = 30.0
ITEMS = 6
TARGET = 3
_ITEM = re.compile(r"Item (\d+):")


def item_of(request: dict[str, Any]) -> int:
    return int(_ITEM.findall(json.dumps(request["input"]))[-1])


def outputs(request: dict[str, Any]) -> list[str]:
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function_call", "name": name, "arguments": json.dumps(arguments)}]


@dataclass
class KillPoint:
    """Stalls every request from the one that arms it on, until the test has killed the CLI.

    `step` is how many tool outputs the target's arming request carries (0: its first request,
    1: the one after its shell call). With `fifo`, the target's shell call also blocks on a FIFO
    and the answer arms the policy without stalling.
    """

    step: int
    stalls_wanted: int
    fifo: bool = False
    stalled: int = 0
    armed: bool = False
    resumed: bool = False
    all_stalled: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)
    finished: set[int] = field(default_factory=set)
    after_resume: list[tuple[int, list[str]]] = field(default_factory=list)

    async def __call__(self, request: dict[str, Any]) -> Any:
        item, done = item_of(request), outputs(request)
        if self.resumed:
            self.after_resume.append((item, done))
        elif self.armed or (item == TARGET and len(done) == self.step and not self.fifo):
            return await self._stall()
        elif item == TARGET and not done and self.fifo:
            self.armed = True
        return self._answer(item, done)

    async def _stall(self) -> str:
        self.armed = True
        self.stalled += 1
        if self.stalled >= self.stalls_wanted:
            self.all_stalled.set()
        await self.release.wait()
        return "too late: the client is gone"

    def _answer(self, item: int, done: list[str]) -> Any:
        if not done:
            command = f"echo {item} >> witness.txt"
            if self.fifo and item == TARGET:
                command += "; cat gate.fifo"
            return call("shell", {"command": command})
        if len(done) == 1:
            return call("report_result", {"n": item})
        if not self.resumed:
            self.finished.add(item)
        return f"item {item} reported"


async def start_fanout(workspace: Path, env: dict[str, str]) -> anyio.abc.Process:
    argv = corral_argv(
        "fanout",
        *("--items", "items.jsonl", "--schema", "schema.json", "--concurrency", "2"),
        *("--run-id", "run-crash", "--template", "Item {n}: append {n} to the witness."),
    )
    return await anyio.open_process(argv, env=env, cwd=workspace, start_new_session=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return fanout_workspace(tmp_path / "ws", ITEMS)


async def run_until_killed(
    workspace: Path, env: dict[str, str], policy: KillPoint, how: signal.Signals
) -> anyio.abc.Process:
    process = await start_fanout(workspace, env)
    gate = workspace / "gate.fifo"
    with anyio.fail_after(WAIT):
        if policy.fifo:
            # Opening the FIFO for writing returns once the sandboxed `cat` opened it to read:
            # the target's command is running and its witness line is written.
            fd = await anyio.to_thread.run_sync(os.open, gate, os.O_WRONLY, abandon_on_cancel=True)
        await policy.all_stalled.wait()
        os.killpg(process.pid, how)
        await process.wait()
    if policy.fifo:
        os.close(fd)
    policy.resumed = True
    policy.release.set()
    return process


async def journaled(home: Path) -> tuple[str, list[str]]:
    """The run's status and its items' statuses, as the journal has them."""
    async with open_sqlite_store(home / "journal.sqlite") as store:
        run = await store.get_run("run-crash")
        items = await store.items("run-crash")
    assert run is not None
    return run.status, [item.status for item in items]


def witness(workspace: Path) -> list[int]:
    return sorted(int(line) for line in (workspace / "witness.txt").read_text().split())


def results(workspace: Path) -> list[dict[str, Any]]:
    text = (workspace / "results.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


async def resume_and_check(workspace: Path, env: dict[str, str], policy: KillPoint) -> None:
    result = await run_corral(["resume", "run-crash"], env=env, cwd=workspace)
    assert result.code == 0, result.stderr
    assert "corral resume: run run-crash (6 items, " in result.stderr
    assert witness(workspace) == list(range(ITEMS)), "every item's tool ran exactly once"
    lines = results(workspace)
    assert [(r["index"], r["status"], r["result"]) for r in lines] == [
        (n, "done", {"n": n}) for n in range(ITEMS)
    ]
    resumed_items = {item for item, _ in policy.after_resume}
    assert policy.finished and not policy.finished & resumed_items, "finished items are kept"


@pytest.mark.parametrize(
    ("step", "fifo", "stalls_wanted"),
    [(0, False, 2), (0, True, 1), (1, False, 2)],
    ids=["after-some-items-finished", "while-a-tool-runs", "between-a-tool-and-the-model"],
)
async def test_a_fanout_killed_and_resumed_does_every_item_exactly_once(
    workspace: Path, tmp_path: Path, step: int, fifo: bool, stalls_wanted: int
) -> None:
    if fifo:
        os.mkfifo(workspace / "gate.fifo")
    policy = KillPoint(step=step, fifo=fifo, stalls_wanted=stalls_wanted)
    async with serve_model_server(policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        await run_until_killed(workspace, env, policy, signal.SIGKILL)
        assert not (workspace / "results.jsonl").exists()
        await resume_and_check(workspace, env, policy)
    target_requests = [done for item, done in policy.after_resume if item == TARGET]
    if fifo:
        told = target_requests[0][0]
        assert "<tool_call_interrupted>" in told and "unknown" in told
    elif step == 1:
        assert "Exit code: 0" in target_requests[0][0], "the journaled result was sent again"


async def test_sigterm_stops_every_worker_and_the_run_resumes(
    workspace: Path, tmp_path: Path
) -> None:
    policy = KillPoint(step=0, stalls_wanted=2)
    async with serve_model_server(policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        process = await run_until_killed(workspace, env, policy, signal.SIGTERM)
        assert process.stderr is not None
        with anyio.fail_after(WAIT):
            stderr = b"".join([chunk async for chunk in process.stderr]).decode()
        assert process.returncode == 143, stderr
        assert "corral fanout: stopped; resume with `corral resume run-crash`" in stderr
        assert "terminated; the journal is kept" in stderr
        assert "Traceback" not in stderr
        await resume_and_check(workspace, env, policy)
