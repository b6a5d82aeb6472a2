"""A worker process's heartbeat, and the parent's watch for one that went silent.

Liveness means the worker's event loop turns: everything a worker does for the run (its agents'
model calls and tools, its permits, its journal) runs on that loop, so a worker whose loop is
blocked (a C call that never returns, a deadlock, a sync call on the loop) is as stuck as one
that was stopped with SIGSTOP, though its process lives. The beat is therefore sent by a task on
that loop, not by a thread beside it. A long tool call does not block the loop (commands run as
child processes, sync tools in threads), so a worker busy with one keeps beating.

The parent counts its own ticks, one per beat interval, since it last heard anything from the
worker (a beat or any other message); after `BEATS` silent ticks it kills the worker's process
group. Counting ticks rather than reading the clock means a parent whose own loop stalled (it
wakes to find a minute gone) counts the stall as one tick, not as a worker's silence.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import threading

import anyio

from ._wire import Channel

BEATS = 6
"""Beats a worker sends per heartbeat timeout; as many silent ticks and it is killed."""
ORPHAN_GRACE = 30.0
"""Seconds an orphaned worker process has to stop by itself (its channel closed, its agents
cancelled, its run closed) before `end_when_orphaned` ends its process group."""
BEAT: dict[str, str] = {"op": "beat"}


def beat_interval(timeout: float) -> float:
    """Seconds between beats (and between the parent's ticks) for a heartbeat `timeout`."""
    return timeout / BEATS


async def send_beats(channel: Channel, interval: float) -> None:
    """A worker's heartbeat: one message per `interval` while its event loop turns; runs until
    cancelled with the worker's task group."""
    while True:
        channel.post(BEAT)
        await anyio.sleep(interval)


class Silence:
    """The parent's count of its ticks since a worker process last said anything."""

    def __init__(self, ticks: int = BEATS) -> None:
        self.limit = ticks
        self.quiet = 0

    def heard(self) -> None:
        """Any message from the worker: it is alive."""
        self.quiet = 0

    def tick(self) -> bool:
        """One interval passed (however long the parent itself was away): whether the worker
        has now been silent for `limit` ticks."""
        self.quiet += 1
        return self.quiet >= self.limit


async def watch_silence(silence: Silence, interval: float) -> None:
    """Return once `silence` has counted its limit of ticks, one per `interval`."""
    while True:
        await anyio.sleep(interval)
        if silence.tick():
            return


def kill_group(pid: int) -> None:
    """SIGKILL worker process `pid` and whatever it started in its process group (it leads
    one of its own). Call it only while `pid` is not yet reaped, so the id is still its."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


_PR_SET_PDEATHSIG = 1


def continue_when_orphaned() -> None:
    """Have the kernel send this worker process SIGCONT when its parent dies. A worker stopped
    then (SIGSTOP) would otherwise stay stopped for ever, since no parent is left to kill it and
    its own process group keeps any other signal off it; woken, it finds its channel closed and
    stops as any orphaned worker does. Linux only; elsewhere nothing is asked."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGCONT), 0, 0, 0)


def end_when_orphaned(grace: float = ORPHAN_GRACE) -> None:
    """Have a thread end this worker process's group `grace` seconds after its parent died,
    should the process still be running then.

    An orphaned worker stops by itself when its event loop sees the channel close; one whose loop
    is blocked (a C call that never returns, a sync call on the loop) never sees it, and nobody
    is left to kill it. A thread beside the loop still runs then: it waits on a pidfd of the
    parent (readable once the parent exited), gives the graceful stop its grace, and SIGKILLs
    the worker with the group it leads (the commands it started there). Linux (5.3 or later)
    only; elsewhere, or if the parent cannot be watched, nothing is asked."""
    parent = os.getppid()
    try:
        pidfd = os.pidfd_open(parent)
    except (AttributeError, OSError):  # not Linux, or a kernel without pidfds
        return
    orphaned = os.getppid() != parent  # the parent died before its pidfd was taken
    if orphaned:
        os.close(pidfd)
    thread = threading.Thread(
        target=_end_after_parent,
        args=(None if orphaned else pidfd, grace),
        name="corral-orphan-watch",
        daemon=True,
    )
    thread.start()


def _end_after_parent(watched: int | None, grace: float) -> None:
    if watched is not None:
        select.select([watched], [], [])
        os.close(watched)
    # Not woken to end early: the process exits by itself (and this daemon thread with it) or
    # the grace runs out.
    threading.Event().wait(grace)
    if os.getpgid(0) == os.getpid():  # a worker leads a group of its own: end it all
        os.killpg(os.getpid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)
