"""Running one child process with bounded time and output, and always reaping it.

The child gets its own session so that a timeout or a cancellation can SIGKILL its whole process
group (or whatever the caller's `stop` kills first, e.g. a sandbox's init); output (stdout and
stderr merged, in the order written) is read concurrently into a head+tail buffer, so a flood
costs no more memory than the budget. What runs is the caller's business.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, Process

from .._errors import OperationFailed
from .._truncate import HeadTailBuffer

# After the command exits, how long output still held by stragglers may take to arrive
# (Codex's IO drain timeout).
DRAIN_GRACE = 2.0
# How long a stopped process may take to exit by itself before its whole group is killed.
STOP_GRACE = 2.0
# How long cleanup may take to reap a killed process group before giving up on it.
REAP_TIMEOUT = 5.0

Stop = Callable[[int], None]


@dataclass(frozen=True)
class ProcessOutcome:
    """How a child process ended: its return code (None when killed at the timeout) and output."""

    returncode: int | None
    timed_out: bool
    duration: float
    output: HeadTailBuffer


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    time_limit: float,
    output_budget: int,
    pass_fds: Sequence[int] = (),
    stop: Stop | None = None,
) -> ProcessOutcome:
    """Run `argv`; stop it at `time_limit` or on cancellation; always reap it.

    `stop(pid)` ends a process that is still running (default: SIGKILL its process group); the
    group is SIGKILLed in any case once the process has exited or ignored `stop`.
    """
    started = time.monotonic()
    buffer = HeadTailBuffer(output_budget)
    halt = stop or kill_process_group
    process = await _spawn(argv, cwd=cwd, env=env, pass_fds=pass_fds)
    try:
        timed_out = await _supervise(process, buffer, time_limit, halt)
    finally:
        with anyio.move_on_after(REAP_TIMEOUT, shield=True):
            await _stop(process, halt)
            await process.aclose()
    returncode = None if timed_out else process.returncode
    return ProcessOutcome(returncode, timed_out, time.monotonic() - started, buffer)


def kill_process_group(pgid: int) -> None:
    """SIGKILL every process of group `pgid`; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _spawn(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], pass_fds: Sequence[int]
) -> Process:
    try:
        return await anyio.open_process(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            pass_fds=pass_fds,
        )
    except OSError as exc:
        raise OperationFailed(f"could not start {argv[0]}: {exc.strerror or exc}") from exc


async def _supervise(
    process: Process, buffer: HeadTailBuffer, time_limit: float, halt: Stop
) -> bool:
    """Wait for exit or the timeout, then collect the rest of the output. True on timeout."""
    drained = anyio.Event()
    if process.stdout is None:  # pragma: no cover - _spawn always asks for a pipe
        raise OperationFailed("the command's output pipe is missing")
    async with anyio.create_task_group() as tg:
        tg.start_soon(_drain, process.stdout, buffer, drained)
        with anyio.move_on_after(time_limit) as deadline:
            await process.wait()
        # On timeout this stops the command; after a normal exit it ends background stragglers
        # that would otherwise hold the output pipe open.
        await _stop(process, halt)
        with anyio.move_on_after(DRAIN_GRACE):
            await drained.wait()
        tg.cancel_scope.cancel()
    return deadline.cancelled_caught


async def _stop(process: Process, halt: Stop) -> None:
    if process.returncode is None:
        halt(process.pid)
        with anyio.move_on_after(STOP_GRACE):
            await process.wait()
    kill_process_group(process.pid)


async def _drain(stream: ByteReceiveStream, buffer: HeadTailBuffer, done: anyio.Event) -> None:
    try:
        async for chunk in stream:
            buffer.write(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        done.set()
