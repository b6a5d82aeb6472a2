"""Writing a computed change set to disk, all of it or none of it.

Each file is written to a temporary file in its own directory and renamed over the target, so
a reader never sees half a file. Every access goes through `_safe_fs`, so a folder swapped for a
symlink after the check makes the write fail (and the patch roll back) instead of landing
elsewhere. If any write fails, everything already written is put back from the originals kept in
memory and the directories created are removed again. Deciding what to write is `_changeset`;
the disk itself sits behind the small `Disk` protocol so tests can make a write fail on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .. import _safe_fs as safe_fs
from ._errors import PatchWriteFailed


@dataclass(frozen=True)
class Original:
    """What a path held before the patch: nothing, a file (bytes and mode), or a symlink."""

    data: bytes | None = None
    mode: int | None = None
    link: str | None = None


@dataclass(frozen=True)
class Change:
    """The final state of one path: new bytes, or None to remove the entry."""

    path: Path
    data: bytes | None
    original: Original


class Disk(Protocol):
    """The filesystem operations a commit needs."""

    def make_dir(self, path: Path) -> None: ...
    def remove_dir(self, path: Path) -> None: ...
    def write_file(self, path: Path, data: bytes, mode: int | None) -> None: ...
    def remove(self, path: Path) -> None: ...
    def make_symlink(self, path: Path, target: str) -> None: ...


class LocalDisk:
    """The real filesystem, reached through `_safe_fs`: no symlink swapped in is followed."""

    def make_dir(self, path: Path) -> None:
        safe_fs.make_dir(path)

    def remove_dir(self, path: Path) -> None:
        safe_fs.remove_dir(path)

    def write_file(self, path: Path, data: bytes, mode: int | None) -> None:
        safe_fs.write_atomic(path, data, mode)

    def remove(self, path: Path) -> None:
        safe_fs.remove(path)

    def make_symlink(self, path: Path, target: str) -> None:
        safe_fs.make_symlink(path, target)


@dataclass(frozen=True)
class _CreatedDir:
    path: Path


@dataclass(frozen=True)
class _Replaced:
    path: Path
    original: Original


_Undo = _CreatedDir | _Replaced


def commit(changes: Sequence[Change], disk: Disk) -> None:
    """Write every change, or restore the tree and raise `PatchWriteFailed`."""
    done: list[_Undo] = []
    for change in changes:
        try:
            _apply_one(change, disk, done)
        except OSError as exc:
            problems = _roll_back(done, disk)
            raise PatchWriteFailed(_failure_message(change, exc, problems)) from exc


def _apply_one(change: Change, disk: Disk, done: list[_Undo]) -> None:
    if change.data is None:
        disk.remove(change.path)
    else:
        for directory in _missing_parents(change.path):
            disk.make_dir(directory)
            done.append(_CreatedDir(directory))
        disk.write_file(change.path, change.data, change.original.mode)
    done.append(_Replaced(change.path, change.original))


def _missing_parents(path: Path) -> list[Path]:
    missing = []
    for parent in path.parents:
        if safe_fs.lstat(parent) is not None:
            break
        missing.append(parent)
    return missing[::-1]


def _roll_back(done: list[_Undo], disk: Disk) -> list[str]:
    problems: list[str] = []
    for undo in reversed(done):
        try:
            if isinstance(undo, _CreatedDir):
                disk.remove_dir(undo.path)
            else:
                _restore(undo, disk)
        except OSError as exc:
            problems.append(f"{undo.path}: {exc.strerror or exc}")
    return problems


def _restore(undo: _Replaced, disk: Disk) -> None:
    original = undo.original
    if original.data is not None:
        disk.write_file(undo.path, original.data, original.mode)
        return
    if safe_fs.lstat(undo.path) is not None:
        disk.remove(undo.path)
    if original.link is not None:
        disk.make_symlink(undo.path, original.link)


def _failure_message(change: Change, exc: OSError, problems: list[str]) -> str:
    action = "removing" if change.data is None else "writing"
    head = f"apply_patch failed while {action} {change.path}: {exc.strerror or exc}."
    if not problems:
        return f"{head} Every file already written was restored; the tree is as it was."
    return f"{head} These paths could not be restored: " + "; ".join(problems)
