"""Git directories that are not named `.git`: read-only inside writable roots like `.git` itself.

A worktree or a `git init --separate-git-dir` repository keeps its git directory wherever its
`.git` file points, and a bare repository is one. Their `hooks/` and `config` run on the host
the next time someone uses git there, so the writing tools refuse any path below a folder that
git would take for a git directory (a `HEAD` file beside `objects/` or a `commondir` file). The
name rule for `.git` and the other protected names lives in `_permissions`.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable
from pathlib import Path

from . import _safe_fs as safe_fs
from ._errors import PermissionDenied


def refuse_git_dir(resolved: Path, writable_roots: Iterable[Path], display: str) -> None:
    """Raise `PermissionDenied` if resolved `path` lies in a git directory below its root."""
    found = git_dir_above(resolved, writable_roots)
    if found is not None:
        raise PermissionDenied(
            f"writing {display} is not allowed: {found} is a git directory (it holds HEAD and "
            "objects), and git directories inside the writable roots are read-only"
        )


def git_dir_above(resolved: Path, writable_roots: Iterable[Path]) -> Path | None:
    """The outermost folder between `resolved` and its writable root that is a git directory."""
    roots = [r for r in writable_roots if resolved == r or resolved.is_relative_to(r)]
    if not roots:
        return None
    root = min(roots, key=lambda r: len(r.parts))
    between = [p for p in reversed(resolved.parents) if p != root and p.is_relative_to(root)]
    return next((folder for folder in between if is_git_dir(folder)), None)


def is_git_dir(folder: Path) -> bool:
    """Whether git would take `folder` for a git directory (as its `is_git_directory` does)."""
    try:
        head = safe_fs.lstat(folder / "HEAD")
        if head is None or not stat.S_ISREG(head.st_mode):
            return False
        objects = safe_fs.lstat(folder / "objects")
        common = safe_fs.lstat(folder / "commondir")
    except OSError:
        return False
    has_objects = objects is not None and stat.S_ISDIR(objects.st_mode)
    return has_objects or (common is not None and stat.S_ISREG(common.st_mode))
