"""Touching the disk at a checked path without following a symlink anyone swapped in since.

The file tools and `apply_patch` check a path once, resolved (no `..`, no symlink left) against
the permission profile. A resolved path names exactly one place on disk, so this module reaches
that place by opening each component from its parent's directory handle with `O_NOFOLLOW`,
starting at `/`: a folder swapped for a symlink between the check and the access makes the access
fail (`SymlinkInPath`) instead of landing outside what was checked. Writes create a temporary file
`O_EXCL` in the same directory handle and rename it with directory handles on both sides. What
may be touched is decided by the profile; this module only makes the decision hold.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

# O_PATH needs no read permission on the folders walked through (an ordinary user's 0711 home).
_WALK_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LIST_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO must not wait for a writer; fstat refuses it right after.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_TEMP_SUFFIX = ".corral-tmp"


class SymlinkInPath(OSError):
    """A component of a checked path is a symlink now; nothing was followed through it."""


def _parts(path: Path) -> tuple[str, ...]:
    if not path.is_absolute() or any(part in ("..", ".") for part in path.parts):
        raise ValueError(f"{path} is not a resolved absolute path")
    return path.parts[1:]


def _refusal(dir_fd: int, name: str, where: Path, exc: OSError) -> OSError:
    """`exc`, or `SymlinkInPath` when `name` under `dir_fd` turned out to be a symlink."""
    if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
        return exc
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return exc
    if not is_link:
        return exc
    return SymlinkInPath(
        errno.ELOOP,
        f"{where} is a symlink where the checked path had none (swapped in since, or a loop), "
        "and corral never follows a symlink it did not check",
        str(where),
    )


def _step(dir_fd: int, name: str, where: Path, flags: int) -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        raise _refusal(dir_fd, name, where, exc) from exc


@contextmanager
def open_dir(path: Path, *, flags: int = _WALK_FLAGS) -> Iterator[int]:
    """A handle of the folder at resolved `path`, reached without following any symlink."""
    fd = os.open("/", flags)
    where = Path("/")
    try:
        for part in _parts(path):
            where = where / part
            child = _step(fd, part, where, flags)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


@contextmanager
def open_parent(path: Path) -> Iterator[tuple[int, str]]:
    """A handle of the folder holding resolved `path`, and the name of `path` in it."""
    if path.parent == path:
        raise IsADirectoryError(errno.EISDIR, "the root folder has no parent", str(path))
    with open_dir(path.parent) as fd:
        yield fd, path.name


def lstat(path: Path) -> os.stat_result | None:
    """What is at `path` itself (a symlink is not followed), or None if nothing is."""
    try:
        if path.parent == path:
            return os.stat("/", follow_symlinks=False)
        with open_parent(path) as (fd, name):
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def open_regular(path: Path) -> BinaryIO:
    """The regular file at `path`, open for reading; a symlink, FIFO or device is refused."""
    with open_parent(path) as (dir_fd, name):
        fd = _step(dir_fd, name, path, _READ_FLAGS)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "rb")


def read_bytes(path: Path, limit: int = -1) -> bytes:
    """The regular file at `path`: the whole of it, or its first `limit` bytes."""
    with open_regular(path) as handle:
        return handle.read(limit)


def read_link(path: Path) -> str:
    with open_parent(path) as (fd, name):
        return os.readlink(name, dir_fd=fd)


def write_atomic(path: Path, data: bytes, mode: int | None) -> None:
    """Replace (or create) the file at `path` with `data` in one rename, keeping `mode`."""
    with open_parent(path) as (dir_fd, name):
        temp = f".{name[:40]}.{secrets.token_hex(4)}{_TEMP_SUFFIX}"
        # 0o666 lets the umask decide for new files; existing files keep their own mode.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o666 if mode is None else 0o600, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if mode is not None:
                    os.fchmod(handle.fileno(), mode & 0o777)
                os.fsync(handle.fileno())
            os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            _unlink_quietly(temp, dir_fd)
            raise


def _unlink_quietly(name: str, dir_fd: int) -> None:
    with suppress(FileNotFoundError):
        os.unlink(name, dir_fd=dir_fd)


def remove(path: Path) -> None:
    """Remove the directory entry at `path` (a symlink itself, never what it points to)."""
    with open_parent(path) as (fd, name):
        os.unlink(name, dir_fd=fd)


def make_dir(path: Path) -> None:
    with open_parent(path) as (fd, name):
        os.mkdir(name, dir_fd=fd)


def remove_dir(path: Path) -> None:
    with open_parent(path) as (fd, name):
        os.rmdir(name, dir_fd=fd)


def make_symlink(path: Path, target: str) -> None:
    with open_parent(path) as (fd, name):
        os.symlink(target, name, dir_fd=fd)


@contextmanager
def open_listing(path: Path) -> Iterator[int]:
    """A readable handle of the folder at `path`, for `list_entries` and `open_child`."""
    with open_dir(path, flags=_LIST_FLAGS) as fd:
        yield fd


def list_entries(dir_fd: int) -> list[os.DirEntry[str]]:
    """The entries of an open folder, sorted by name (their `path` is just the name)."""
    with os.scandir(dir_fd) as it:
        return sorted(it, key=lambda entry: entry.name)


@contextmanager
def open_child_dir(dir_fd: int, name: str, where: Path) -> Iterator[int]:
    """A readable handle of folder `name` inside an open folder, refusing a symlink."""
    fd = _step(dir_fd, name, where, _LIST_FLAGS)
    try:
        yield fd
    finally:
        os.close(fd)


def open_child_file(dir_fd: int, name: str, where: Path) -> BinaryIO:
    """Regular file `name` inside an open folder, for reading; anything else is refused."""
    fd = _step(dir_fd, name, where, _READ_FLAGS)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(where))
    return os.fdopen(fd, "rb")


def open_file_below(dir_fd: int, parts: tuple[str, ...], where: Path) -> BinaryIO:
    """Regular file at `parts` below an open folder, every folder on the way refusing a symlink.

    `where` is the absolute path the parts lead to, for messages.
    """
    if not parts or any(part in ("", ".", "..") or "/" in part for part in parts):
        raise ValueError(f"{where} is not a path below the folder searched")
    fd = os.dup(dir_fd)
    try:
        for part in parts[:-1]:
            child = _step(fd, part, where, _WALK_FLAGS)
            os.close(fd)
            fd = child
        return open_child_file(fd, parts[-1], where)
    finally:
        os.close(fd)
