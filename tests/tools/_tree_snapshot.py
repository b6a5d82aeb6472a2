"""Snapshots of a directory tree, to assert that a tool left the filesystem exactly as it was."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

Entry = tuple[str, bytes | str | None, int]


def tree_snapshot(root: Path) -> dict[str, Entry]:
    """Every entry below `root`: kind, content (bytes, link target, or None) and mode."""
    found: dict[str, Entry] = {}
    for here, dirs, files in os.walk(root, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(here, name)
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path), 0)
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir", None, info.st_mode)
            elif stat.S_ISREG(info.st_mode):
                found[rel] = ("file", path.read_bytes(), info.st_mode)
            else:
                found[rel] = ("special", None, info.st_mode)
    return found


def tree_contents(root: Path) -> dict[str, tuple[str, bytes | str | None]]:
    """Like `tree_snapshot` without modes: kind and content only (empty if `root` is missing)."""
    return {rel: (kind, content) for rel, (kind, content, _) in tree_snapshot(root).items()}


def copy_tree(source: Path, dest: Path) -> None:
    """Copy `source` to a fresh, writable `dest` (the data folders are read-only)."""
    dest.mkdir(parents=True, exist_ok=True)
    if not source.is_dir():
        return
    for here, dirs, files in os.walk(source):
        target = dest / Path(here).relative_to(source)
        for name in dirs:
            (target / name).mkdir()
        for name in files:
            shutil.copyfile(Path(here, name), target / name)
