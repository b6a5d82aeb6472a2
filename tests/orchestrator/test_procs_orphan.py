"""A fan-out worker process whose event loop is blocked when its parent dies never sees its
channel close; its watchdog thread (`end_when_orphaned`) ends it once the grace has passed.
Real processes: a parent that starts a worker in a session of its own, as the fan-out does, and
is then SIGKILLed; the worker's "loop" is its main thread stuck in a sync call."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux's"),
]
WAIT = 30.0
ENDED = 10.0
"""How long a worker may take to be gone once it should be."""

WORKER = """
import sys, time
from corral.orchestrator._procs._heartbeat import end_when_orphaned
end_when_orphaned(grace=float(sys.argv[1]))
print("blocked", flush=True)
time.sleep(3600)  # a sync call on the loop's thread: the loop never turns again
"""
PARENT = """
import subprocess, sys
worker = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]], start_new_session=True)
print(worker.pid, flush=True)
sys.stdin.read()  # until it is killed
"""


async def _ended_within(pidfd: int, seconds: float) -> bool:
    readable, _, _ = await anyio.to_thread.run_sync(select.select, [pidfd], [], [], seconds)
    return bool(readable)


def _end(pidfd: int) -> None:
    """Leave no worker behind, whatever the test found."""
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    os.close(pidfd)


async def _start(grace: float) -> tuple[anyio.abc.Process, int]:
    """The parent, and a pidfd of its blocked worker (taken while the parent is alive)."""
    parent = await anyio.open_process(
        [sys.executable, "-c", PARENT, WORKER, str(grace)], stdin=-1, stdout=-1
    )
    assert parent.stdout is not None
    lines = BufferedByteReceiveStream(parent.stdout)
    said = {(await lines.receive_until(b"\n", 100)).decode() for _ in range(2)}
    said.discard("blocked")
    pidfd = os.pidfd_open(int(said.pop()))
    return parent, pidfd


async def test_a_blocked_worker_is_ended_once_its_parent_died_and_the_grace_passed() -> None:
    with anyio.fail_after(WAIT):
        parent, pidfd = await _start(grace=0.05)
        try:
            await _kill(parent)
            assert await _ended_within(pidfd, ENDED), "the orphaned worker is still running"
        finally:
            _end(pidfd)


async def test_a_blocked_worker_whose_parent_lives_is_left_alone() -> None:
    with anyio.fail_after(WAIT):
        parent, pidfd = await _start(grace=0.05)
        try:
            # Ten times the grace: had the watchdog fired, the worker would be gone by now.
            assert not await _ended_within(pidfd, 0.5)
            await _kill(parent)
            assert await _ended_within(pidfd, ENDED)
        finally:
            await _kill(parent)
            _end(pidfd)


async def _kill(parent: anyio.abc.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        parent.kill()
    await parent.aclose()
