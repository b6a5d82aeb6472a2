"""Run leases: the journal's record of which process carries a run on, so only one does.

A lease names its holder (a fresh id per taking), the host, the pid, when it was taken and when
its holder last beat. At most one lease of a run is live (not released). Taking a run whose live
lease belongs to a running process is refused (`RunLeaseHeld`); a lease whose holder is gone (a
dead pid on this host, or no heartbeat within its timeout) is released and superseded, and the
new lease says whom it took the run from. Both stores decide with `check_take`, so they agree.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime
from pathlib import Path

from corral.tools import OperationFailed

from ._errors import StoreError
from ._records import _Record


class LeaseRecord(_Record):
    """One taking of a run by one process; `released_at` is set when it let go or lost it."""

    mutable_fields = frozenset({"heartbeat_at", "released_at"})

    run_id: str
    holder: str
    host: str
    pid: int
    since: float
    heartbeat_at: float
    timeout: float
    released_at: float | None = None
    taken_from: str | None = None
    """Set on a takeover: which holder had the run, and why it was judged gone."""

    def describe(self) -> str:
        """Who holds it, for messages: holder, pid, host and since when."""
        return f"{self.holder} (pid {self.pid} on {self.host}) since {_when(self.since)}"


class RunLeaseHeld(StoreError, OperationFailed):
    """Another live process carries the run on; this one must not."""

    def __init__(self, lease: LeaseRecord, now: float) -> None:
        beat = max(0.0, now - lease.heartbeat_at)
        super().__init__(
            f"run {lease.run_id} is being carried on by {lease.describe()}, last heartbeat "
            f"{beat:.0f} s ago; wait for it to end, or stop that process (its lease is taken "
            f"over once it is gone or silent for {lease.timeout:.0f} s)"
        )
        self.lease = lease


def this_host() -> str:
    return socket.gethostname()


def holder_gone(lease: LeaseRecord, now: float, *, host: str | None = None) -> str | None:
    """Why `lease`'s holder counts as gone, or None while it may still be alive."""
    if now - lease.heartbeat_at > lease.timeout:
        return f"no heartbeat for {now - lease.heartbeat_at:.0f} s (timeout {lease.timeout:.0f} s)"
    if lease.host == (host or this_host()) and not pid_alive(lease.pid):
        return f"pid {lease.pid} on {lease.host} is no longer running"
    return None


def pid_alive(pid: int) -> bool:
    """Whether a process with `pid` runs on this host (a zombie counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return not _zombie(pid)


def check_take(
    live: LeaseRecord | None, wanted: LeaseRecord, now: float
) -> tuple[LeaseRecord, LeaseRecord | None]:
    """The lease to write for `wanted` and the live one it releases; raises `RunLeaseHeld`.

    A holder that asks again for its own lease just renews it.
    """
    if live is None:
        return wanted, None
    if live.holder == wanted.holder:
        return live.model_copy(update={"heartbeat_at": now}), None
    reason = holder_gone(live, now)
    if reason is None:
        raise RunLeaseHeld(live, now)
    note = f"{live.holder} (pid {live.pid} on {live.host}): {reason}"
    released = live.model_copy(update={"released_at": now})
    return wanted.model_copy(update={"taken_from": note}), released


def _zombie(pid: int) -> bool:
    # A killed child stays a zombie until its parent reaps it, and `kill(pid, 0)` still succeeds.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
