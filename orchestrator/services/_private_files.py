"""Reading a cache file only when no one else could have written it.

The vector cache and the int8 graph live in a folder a user may point anywhere
(`CORRAL_CACHE_DIR`), shared or world-writable ones included, and their file names are
predictable. What another account planted there (vectors that steer tool search, a graph of its
own, a FIFO that blocks a reader forever, a symlink to elsewhere) must never be read: a file is
used only when it is a regular file, not a symlink, owned by this user and writable by nobody
else. Any other file is treated as missing, so the caller rebuilds what it needed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def open_private(path: Path) -> BinaryIO | None:
    """`path` open for reading if it is this user's own regular file that nobody else may
    write; None (nothing opened) for anything else, or if it cannot be opened."""
    try:
        # O_NONBLOCK: a FIFO in the file's place must not hold up the open.
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not is_private(info):
            os.close(fd)
            return None
        os.set_blocking(fd, True)
    except OSError:
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def is_private(info: os.stat_result) -> bool:
    """Whether `info` is of a regular file this user owns and nobody else may write."""
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_uid == os.geteuid()
        and not info.st_mode & _OTHERS_WRITE
    )
