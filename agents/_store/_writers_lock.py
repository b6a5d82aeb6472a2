"""A lock the SQLite journal's writers of every process take around each write transaction.

SQLite lets one connection write at a time, and a connection that finds the file locked sleeps
in steps of 1 to 100 ms before it looks again: while it sleeps, the writer that held the lock
may take it again, and a fan-out's worker processes spent seconds of a run waiting on each
other that way. `flock` on a file beside the journal (`<journal>-writers`) wakes a waiter when
the lock is let go. It is advisory and only orders corral's own writers: SQLite's lock still
guards the file, so a writer without it (an older corral, a migration) is safe, only slower.

A wait is bounded: a writer that does not get the lock within its deadline (a holder that was
stopped mid-transaction) goes on without it, and SQLite's busy timeout applies as before.
Waiting happens in a thread of its own (a blocking `flock` cannot be given a deadline), started
at the first contention; the writer's thread waits on an event, with the deadline.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import stat
import threading
from pathlib import Path
from typing import Final

SUFFIX: Final = "-writers"

_WAITING, _GRANTED, _ABANDONED = "waiting", "granted", "abandoned"


class _Request:
    def __init__(self) -> None:
        self.state = _WAITING
        self.mutex = threading.Lock()
        self.granted = threading.Event()


class WritersLock:
    """The journal's writers' lock for one connection; `acquire` it around a write transaction
    and `release` it after. Without a lock file (it cannot be made or is not a regular file of
    this user's) every `acquire` answers False at once and nothing is locked."""

    def __init__(self, journal: Path) -> None:
        self._fd = _open_lock_file(Path(f"{journal}{SUFFIX}"))
        self._requests: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
        self._waiter: threading.Thread | None = None
        self._pending = 0
        self._counting = threading.Lock()

    def acquire(self, deadline: float) -> bool:
        """Take the lock, waiting at most `deadline` seconds; False if it was not taken."""
        taken = self._take_now()
        if taken is None:  # nothing to take
            return False
        return taken or self._wait(deadline)

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it, never waiting; False if another writer holds it.
        True, with nothing taken, where there is no lock to take (SQLite's lock alone)."""
        return self._take_now() is not False

    def _take_now(self) -> bool | None:
        """True: taken; False: another writer holds it; None: there is no lock to take."""
        if self._fd is None:
            return None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        except OSError:  # a file system without flock (ENOLCK): SQLite's lock alone, as before
            self.close()
            return None

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Let the file go; a waiter still blocked on it (a stopped holder) keeps it open, so its
        descriptor is never reused under it."""
        if self._waiter is not None:
            self._requests.put(None)
        with self._counting:
            if self._fd is not None and self._pending == 0:
                os.close(self._fd)
        self._fd = None

    def _wait(self, deadline: float) -> bool:
        if self._waiter is None:
            self._waiter = threading.Thread(
                target=self._serve, name="corral-journal-lock", daemon=True
            )
            self._waiter.start()
        request = _Request()
        with self._counting:
            self._pending += 1
        self._requests.put(request)
        request.granted.wait(deadline)
        with request.mutex:
            if request.state == _GRANTED:
                return True
            request.state = _ABANDONED
            return False

    def _serve(self) -> None:
        fd = self._fd
        while (request := self._requests.get()) is not None and fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:  # the writer's deadline passes and SQLite's lock alone applies
                with self._counting:
                    self._pending -= 1
                continue
            with request.mutex:
                if request.state == _ABANDONED:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                else:
                    request.state = _GRANTED
                    request.granted.set()
            with self._counting:
                self._pending -= 1


def _open_lock_file(path: Path) -> int | None:
    """The lock file's descriptor; None when it cannot be used. Never follows a link planted
    in its place, and refuses anything but a regular file this user owns."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        os.close(fd)
        return None
    return fd
