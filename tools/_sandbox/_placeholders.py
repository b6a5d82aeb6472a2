"""Empty placeholder folders that make a missing protected name impossible to create.

A mount needs a mount point, so a `.corral` missing from a workspace is created empty on the host
for as long as a sandbox runs there, and mounted read-only inside it. Every run holds a shared
`flock` on each placeholder it mounted; the last one out (the only one that gets the exclusive
lock) removes it if it is still empty. Removing a folder that is still a mount point in another
sandbox would silently unmount it there (Linux detaches mounts of other namespaces on rmdir),
which is what the lock prevents.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Sequence
from pathlib import Path

from .._errors import PermissionDenied, SandboxUnavailable

# How long a run waits for a placeholder that another run is removing at that moment.
CLAIM_TIMEOUT = 5.0
_POLL = 0.01


class Placeholders:
    """The placeholders of one run: `claim` before the sandbox starts, `release` after."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self._paths = list(dict.fromkeys(paths))
        self._held: list[tuple[Path, int]] = []

    def claim(self) -> None:
        try:
            for path in self._paths:
                self._held.append((path, _claim(path)))
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        held, self._held = self._held, []
        for path, fd in held:
            _release(path, fd)


def _claim(path: Path) -> int:
    """A shared lock on the folder at `path`, created if missing (retried if it was removed)."""
    deadline = time.monotonic() + CLAIM_TIMEOUT
    while True:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o755)
        fd = _open_folder(path)
        if fd is not None:
            if _lock_shared(fd, deadline) and _same_file(fd, path):
                return fd
            os.close(fd)
        if time.monotonic() > deadline:
            raise SandboxUnavailable(f"could not set up the read-only placeholder {path}")


def _open_folder(path: Path) -> int | None:
    """The folder at `path`, opened; None when the last run out removed it after our `mkdir`
    found it there (the caller creates it again)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PermissionDenied(
                f"{path} changed into something other than a folder; the sandbox cannot keep it"
                " read-only. Nothing was run."
            ) from exc
        raise SandboxUnavailable(f"could not open the placeholder {path}: {exc.strerror}") from exc


def _lock_shared(fd: int, deadline: float) -> bool:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(_POLL)  # another run is removing it right now: a few ms at most


def _same_file(fd: int, path: Path) -> bool:
    try:
        now = os.lstat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _release(path: Path, fd: int) -> None:
    """Remove the placeholder if no other run holds it and it is still empty."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return
    try:
        if _same_file(fd, path):
            with contextlib.suppress(OSError):  # not empty, or already gone: keep it
                os.rmdir(path)
    finally:
        os.close(fd)
