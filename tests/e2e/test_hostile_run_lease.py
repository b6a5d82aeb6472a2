"""One owner per run: a second process on a live run refuses; once the first is gone, it takes over.

Issue 16: two `corral fanout --run-id X` at once both ran the unfinished items (a side-effecting
tool ran twice), and a second `corral resume` died with a raw "tool call already exists". Here
the first process is held with every model request stalled, the contender is refused with the
holder named, the first is SIGKILLed, and the contender started again takes the run over and
finishes it: every item's tool ran exactly once (the witness file shows it).
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

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

WAIT = 40.0
ITEMS = 3
RUN = "run-owned"
TEMPLATE = "Item {n}: append {n} to the witness."
_ITEM = re.compile(r"Item (\d+):")
_HELD = re.compile(
    rf"error: run {RUN} is being carried on by lease-[0-9a-f]+ \(pid (\d+) on [^)]+\) since "
)


@dataclass
class HeldThenAnswered:
    """Stalls every request until `release`; after it, a worker appends to the witness with one
    shell call, reports its number, and ends."""

    stalled: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)

    async def __call__(self, request: dict[str, Any]) -> Any:
        if not self.release.is_set():
            self.stalled.set()
            await self.release.wait()
            return "too late: the client is gone"
        text = json.dumps(request["input"])
        item = int(_ITEM.findall(text)[-1])
        done = [i for i in request["input"] if i.get("type") == "function_call_output"]
        if not done:
            return _call("shell", {"command": f"echo {item} >> witness.txt"})
        if len(done) == 1:
            return _call("report_result", {"n": item})
        return f"item {item} reported"


def _call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function_call", "name": name, "arguments": json.dumps(arguments)}]


FANOUT = (
    "fanout",
    *("--items", "items.jsonl", "--schema", "schema.json", "--concurrency", "2"),
    *("--run-id", RUN, "--template", TEMPLATE),
)
EXEC = ("exec", "--run-id", RUN, "Item 0: append 0 to the witness.")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return fanout_workspace(tmp_path / "ws", ITEMS)


async def hold_first(
    workspace: Path, env: dict[str, str], first: tuple[str, ...]
) -> anyio.abc.Process:
    argv = corral_argv(*first)
    return await anyio.open_process(argv, env=env, cwd=workspace, start_new_session=True)


async def kill(process: anyio.abc.Process) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    await process.wait()  # reaped: its pid is gone, not a zombie


def witness(workspace: Path) -> list[int]:
    return sorted(int(line) for line in (workspace / "witness.txt").read_text().split())


@pytest.mark.parametrize(
    ("first", "contender", "items"),
    [(FANOUT, FANOUT, ITEMS), (FANOUT, ("resume", RUN), ITEMS), (EXEC, ("resume", RUN), 1)],
    ids=["fanout-then-fanout", "fanout-then-resume", "exec-then-resume"],
)
async def test_a_second_process_on_a_live_run_refuses_then_takes_over_once_it_is_gone(
    workspace: Path, tmp_path: Path, first: tuple[str, ...], contender: tuple[str, ...], items: int
) -> None:
    policy = HeldThenAnswered()
    async with serve_model_server(policy) as server:
        env = corral_env(tmp_path / "home", server.base_url)
        process = await hold_first(workspace, env, first)
        try:
            with anyio.fail_after(WAIT):
                await policy.stalled.wait()
            refused = await run_corral(list(contender), env=env, cwd=workspace)
            requests_while_held = len(server.requests)
        finally:
            await kill(process)
        assert refused.code == 1, refused.stderr
        assert "Traceback" not in refused.stderr and "already exists" not in refused.stderr
        held = _HELD.search(refused.stderr)
        assert held is not None, refused.stderr
        assert int(held.group(1)) == process.pid
        assert not (workspace / "witness.txt").exists(), "the contender ran nothing"
        assert requests_while_held <= 2, "the contender sent no model request"

        policy.release.set()
        taken = await run_corral(list(contender), env=env, cwd=workspace)
        assert taken.code == 0, taken.stderr
        assert f"run {RUN}: taken over from lease-" in taken.stderr
        assert f"(pid {process.pid} on " in taken.stderr and "is no longer running" in taken.stderr
        assert witness(workspace) == list(range(items)), "every item's tool ran exactly once"

        status = await run_corral(["status", RUN], env=env, cwd=workspace)
    assert status.code == 0, status.stderr
    assert re.search(
        rf"taken over at .* from lease-[0-9a-f]+ \(pid {process.pid} on ", status.stdout
    )
    assert "carried on by" not in status.stdout, "the lease was released at the end"
    async with open_sqlite_store(tmp_path / "home" / "journal.sqlite") as store:
        leases = await store.leases(RUN)
    assert [lease.released_at is not None for lease in leases] == [True, True]
    assert leases[1].taken_from is not None and leases[1].taken_from.startswith(leases[0].holder)
