"""Turning a parsed patch into a complete change set before anything is written.

Every hunk is checked against the permission profile and applied to an in-memory view of the
tree, in patch order, so later hunks see earlier ones (add then update, delete then add). Only
when the whole patch fits does `apply_patch_text` hand the change set to `_commit`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Final

import anyio

from .. import _safe_fs as safe_fs
from .._errors import PermissionDenied
from .._gitdirs import refuse_git_dir
from .._permissions import PermissionProfile, SandboxMode, is_within
from ._apply import apply_chunks
from ._commit import Change, Disk, LocalDisk, Original, commit
from ._errors import PatchConflict
from ._parse import AddFile, DeleteFile, Hunk, UpdateFile, parse_patch

_SNIFF_BYTES = 8192
MAX_PATCHED_FILE_BYTES = 64 * 1024 * 1024
"""The largest file apply_patch reads to change or delete (64 MiB, the largest message corral
reads anywhere)."""


class _Directory:
    """Marks a path that is a directory on disk."""


_DIR: Final = _Directory()
_State = bytes | None | _Directory


@dataclass(frozen=True)
class PatchResult:
    """The files a patch touched, as the patch named them."""

    added: tuple[str, ...]
    modified: tuple[str, ...]
    deleted: tuple[str, ...]

    def summary(self) -> str:
        lines = ["Success. Updated the following files:"]
        for letter, paths in (("A", self.added), ("M", self.modified), ("D", self.deleted)):
            lines.extend(f"{letter} {p}" for p in paths)
        return "\n".join(lines)


@dataclass
class _ChangeSet:
    cwd: Path
    profile: PermissionProfile
    confine: Path | None = None
    states: dict[Path, bytes | None] = field(default_factory=dict)
    originals: dict[Path, Original] = field(default_factory=dict)
    touched: dict[str, dict[str, None]] = field(default_factory=lambda: {"A": {}, "M": {}, "D": {}})

    # -- the in-memory view of the tree ---------------------------------------------------

    def state(self, path: Path) -> _State:
        if path in self.states:
            return self.states[path]
        info = _lstat(path)
        if info is None:
            return None
        if stat.S_ISDIR(info.st_mode):
            return _DIR
        return self._remember(path).data or b""

    def _remember(self, path: Path) -> Original:
        if path not in self.originals:
            self.originals[path] = _read_original(path)
        return self.originals[path]

    def put(self, path: Path, data: bytes | None) -> None:
        self._remember(path)
        self.states[path] = data

    def note(self, letter: str, display: str) -> None:
        self.touched[letter][display] = None

    # -- paths ----------------------------------------------------------------------------

    def writable(self, display: str) -> Path:
        with _resolving(display):
            resolved = self.profile.check_write(display, cwd=self.cwd)
        self._guard(resolved, display)
        return resolved

    def readable(self, display: str) -> Path:
        with _resolving(display):
            return self.profile.check_read(display, cwd=self.cwd)

    def entry(self, display: str) -> Path:
        """Where the directory entry named `display` lives (its last part not followed)."""
        joined = self.cwd / display
        with _resolving(display):
            entry = Path(os.path.realpath(joined.parent)) / joined.name
            if joined.name in ("", "..") or entry.parent == entry:
                entry = Path(os.path.realpath(joined))
        if entry != self.writable(display) and not self.profile.can_write(entry):
            raise PermissionDenied(
                f"removing {display} is not allowed: it is outside the writable roots"
            )
        self._guard(entry, display)
        return entry

    def _guard(self, resolved: Path, display: str) -> None:
        """The rules beyond the profile's: the confining folder, and git dirs of any name."""
        if self.confine is not None and not is_within(resolved, (self.confine,)):
            raise PermissionDenied(
                f"writing {display} is not allowed: it is outside {self.confine}, "
                "the only folder this patch may change"
            )
        if self.profile.sandbox is SandboxMode.WORKSPACE_WRITE and not self.profile.git_writable:
            refuse_git_dir(resolved, self.profile.writable_roots, display)

    def check_parents(self, target: Path, display: str) -> None:
        for parent in target.parents:
            current = self.state(parent)
            if current is _DIR:
                return
            if current is not None:
                raise PatchConflict(f"cannot write {display}: {parent} is a file, not a directory")

    # -- results --------------------------------------------------------------------------

    def changes(self) -> list[Change]:
        # A file the patch adds and then moves or deletes again leaves nothing to remove.
        changes = [Change(p, d, self.originals[p]) for p, d in self.states.items()]
        return [c for c in changes if c.data is not None or c.original != Original()]

    def result(self) -> PatchResult:
        return PatchResult(*(tuple(self.touched[k]) for k in ("A", "M", "D")))


def apply_patch_text(
    text: str,
    *,
    cwd: Path,
    profile: PermissionProfile,
    disk: Disk | None = None,
    confine: Path | None = None,
) -> PatchResult:
    """Parse, check and apply a patch; all of it, or nothing (blocking).

    With `confine`, every path the patch changes must also lie below that folder (resolved).
    """
    patch = parse_patch(text)
    root = None if confine is None else Path(os.path.realpath(confine))
    changes = _ChangeSet(cwd, profile, root)
    for hunk in patch.hunks:
        _plan_hunk(changes, hunk)
    commit(changes.changes(), disk or LocalDisk())
    return changes.result()


async def apply_patch(
    text: str,
    *,
    cwd: Path,
    profile: PermissionProfile,
    disk: Disk | None = None,
    confine: Path | None = None,
) -> PatchResult:
    """`apply_patch_text` on a worker thread."""
    run = partial(apply_patch_text, text, cwd=cwd, profile=profile, disk=disk, confine=confine)
    return await anyio.to_thread.run_sync(run)


def _plan_hunk(changes: _ChangeSet, hunk: Hunk) -> None:
    if isinstance(hunk, AddFile):
        _plan_add(changes, hunk)
    elif isinstance(hunk, DeleteFile):
        _plan_delete(changes, hunk)
    else:
        _plan_update(changes, hunk)


def _plan_add(changes: _ChangeSet, hunk: AddFile) -> None:
    target = changes.writable(hunk.path)
    _put_file(changes, target, hunk.path, hunk.contents.encode())
    changes.note("A", hunk.path)


def _plan_delete(changes: _ChangeSet, hunk: DeleteFile) -> None:
    entry = changes.entry(hunk.path)
    current = changes.state(entry)
    if current is None:
        raise PatchConflict(f"cannot delete {hunk.path}: no such file. No file was changed.")
    if current is _DIR:
        raise PatchConflict(
            f"cannot delete {hunk.path}: it is a directory, and apply_patch deletes files only. "
            "No file was changed."
        )
    changes.put(entry, None)
    changes.note("D", hunk.path)


def _plan_update(changes: _ChangeSet, hunk: UpdateFile) -> None:
    source = changes.writable(hunk.path)
    changes.readable(hunk.path)
    text = _text_of(changes.state(source), hunk.path)
    new = apply_chunks(text, hunk.chunks, hunk.path).encode()
    if hunk.move_to is None:
        changes.put(source, new)
        changes.note("M", hunk.path)
        return
    dest = changes.writable(hunk.move_to)
    entry = changes.entry(hunk.path)
    if dest != source:
        changes.put(entry, None)
    _put_file(changes, dest, hunk.move_to, new)
    changes.note("M", hunk.move_to)


def _put_file(changes: _ChangeSet, target: Path, display: str, data: bytes) -> None:
    if changes.state(target) is _DIR:
        raise PatchConflict(f"cannot write {display}: it is a directory. No file was changed.")
    changes.check_parents(target, display)
    changes.put(target, data)


def _text_of(current: _State, display: str) -> str:
    if current is None:
        raise PatchConflict(
            f"cannot update {display}: no such file (use '*** Add File:' to create it). "
            "No file was changed."
        )
    if isinstance(current, _Directory):
        raise PatchConflict(f"cannot update {display}: it is a directory. No file was changed.")
    if b"\0" in current[:_SNIFF_BYTES]:
        raise PatchConflict(
            f"cannot update {display}: it is a binary file ({len(current)} bytes); "
            "apply_patch edits text files only. No file was changed."
        )
    try:
        return current.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PatchConflict(
            f"cannot update {display}: it is not valid UTF-8 text ({len(current)} bytes); "
            "apply_patch edits text files only. No file was changed."
        ) from exc


@contextmanager
def _resolving(display: str) -> Iterator[None]:
    """Turn a failure to resolve `display` (a folder renamed mid-resolution) into a refusal."""
    try:
        yield
    except OSError as exc:
        raise PatchConflict(
            f"cannot resolve {display}: {exc.strerror or exc} (it changed while being checked). "
            "No file was changed."
        ) from exc


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return safe_fs.lstat(path)
    except OSError as exc:
        raise _unreadable(path, exc) from exc


def _read_original(path: Path) -> Original:
    try:
        info = safe_fs.lstat(path)
        if info is None:
            return Original()
        if stat.S_ISLNK(info.st_mode):
            return Original(link=safe_fs.read_link(path))
        if stat.S_ISREG(info.st_mode):
            return Original(data=_read_capped(path, info.st_size), mode=info.st_mode)
    except FileNotFoundError:
        return Original()
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    raise PatchConflict(f"cannot patch {path}: it is not a regular file")


def _read_capped(path: Path, size: int) -> bytes:
    """The file's bytes, refused past `MAX_PATCHED_FILE_BYTES`: the size is the model's to make
    (a sparse `truncate -s 100G` costs no disk), and the whole file is held to be patched."""
    cap = MAX_PATCHED_FILE_BYTES
    data = b"" if size > cap else safe_fs.read_bytes(path, cap + 1)
    if size > cap or len(data) > cap:
        raise PatchConflict(
            f"cannot patch {path}: it is larger than {cap // 2**20} MiB; "
            "change it with the shell instead. No file was changed."
        )
    return data


def _unreadable(path: Path, exc: OSError) -> PatchConflict:
    return PatchConflict(f"cannot read {path}: {exc.strerror or exc}. No file was changed.")
