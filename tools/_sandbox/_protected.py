"""Finding what must stay read-only inside the writable roots before a sandbox is built.

Every `.git`, `.corral`, `.codex` and `.agents` below a writable root (and the git dirs a
worktree's `.git` file points at) is mounted read-only again after the writable binds; the names
missing at a root's top, and a hidden root missing inside a writable root, get an empty folder as
a placeholder so that they cannot be created either. Creating and removing placeholders is
`_placeholders`' job; mounting is `_bwrap_args`'.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import PermissionDenied
from .._permissions import PROTECTED_NAMES, PermissionProfile, SandboxMode, is_within

# The walk below each writable root is bounded so that a shell call stays cheap in a huge tree:
# it is breadth-first, skips the folders below that are build output or dependencies (their
# nested repositories are not the user's), and stops after this many folders. A nested `.git`
# deeper than that is not found and stays writable; the names at each root's top always are.
WALK_MAX_FOLDERS = 20_000
# Each protected path is one mount; past this many the rest are left writable, like the above.
MAX_PROTECTED = 1_000
SKIPPED_FOLDERS = frozenset(
    {
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "target",
    }
)


@dataclass
class ProtectedSurvey:
    """The paths to mount read-only, and the folders to claim first (created when missing)."""

    read_only: list[Path] = field(default_factory=list)
    placeholders: list[Path] = field(default_factory=list)

    def add(self, path: Path) -> None:
        if path not in self.read_only and len(self.read_only) < MAX_PROTECTED:
            self.read_only.append(path)


def protected_names(profile: PermissionProfile) -> tuple[str, ...]:
    return tuple(n for n in PROTECTED_NAMES if not (n == ".git" and profile.git_writable))


def survey_protected(profile: PermissionProfile) -> ProtectedSurvey:
    """What stays read-only in `profile`'s writable roots; refuses a protected name that is a
    symlink at a root's top, since the link itself could be swapped for a real folder."""
    survey = ProtectedSurvey()
    if profile.sandbox is not SandboxMode.WORKSPACE_WRITE:
        return survey
    roots = [r for r in profile.writable_roots if r.is_dir() and not profile.is_hidden(r)]
    names = protected_names(profile)
    for root in roots:
        _survey_top(root, names, roots, survey)
        for path in _walk_below(root, names, profile.hidden_roots):
            _add_found(path, roots, survey)
        for hidden in profile.hidden_roots:
            _hidden_placeholder(hidden, root, survey)
    return survey


def _survey_top(
    root: Path, names: Sequence[str], roots: Sequence[Path], survey: ProtectedSurvey
) -> None:
    for name in names:
        path = root / name
        if path.is_symlink():
            raise PermissionDenied(
                f"{path} is a symbolic link, which the sandbox cannot keep read-only; replace it"
                " with a real folder (or file), or run with full access. Nothing was run."
            )
        if path.exists():
            _add_found(path, roots, survey)
        if path.is_dir() or not path.exists():
            # Claimed even when it holds files: a run that placed it may remove it once empty.
            survey.placeholders.append(path)


def _add_found(path: Path, roots: Sequence[Path], survey: ProtectedSurvey) -> None:
    """A protected entry found below a root: itself, or what a symlink or `.git` file names."""
    target = Path(os.path.realpath(path))
    if is_within(target, roots) and target.exists():
        survey.add(target)
    if path.name == ".git" and path.is_file() and not path.is_symlink():
        for gitdir in _linked_git_dirs(path):
            if is_within(gitdir, roots):
                survey.add(gitdir)


def _walk_below(root: Path, names: Sequence[str], hidden: Sequence[Path]) -> Iterator[Path]:
    """Protected entries strictly below `root`'s top, breadth-first and bounded (see above)."""
    queue = deque([root])
    visited = 0
    while queue and visited < WALK_MAX_FOLDERS:
        folder = queue.popleft()
        visited += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name in names:
                if folder != root:
                    yield Path(entry.path)
                continue
            if entry.name in SKIPPED_FOLDERS or not entry.is_dir(follow_symlinks=False):
                continue
            if not is_within(Path(entry.path), hidden):
                queue.append(Path(entry.path))


def _linked_git_dirs(dot_git: Path) -> list[Path]:
    """The git dir a worktree's (or submodule's) `.git` file points at, and its common dir."""
    gitdir = _pointer(dot_git, "gitdir:", dot_git.parent)
    if gitdir is None:
        return []
    common = _pointer(gitdir / "commondir", "", gitdir)
    return [gitdir] if common is None else [gitdir, common]


def _pointer(file: Path, prefix: str, base: Path) -> Path | None:
    try:
        first = file.read_text(encoding="utf-8", errors="replace").splitlines()[:1]
    except OSError:
        return None
    if not first or not first[0].startswith(prefix):
        return None
    target = Path(os.path.realpath(base / first[0].removeprefix(prefix).strip()))
    return target if target.exists() else None


def _hidden_placeholder(hidden: Path, root: Path, survey: ProtectedSurvey) -> None:
    """A hidden root missing inside `root`: its top-most missing folder gets a placeholder."""
    if hidden == root or not hidden.is_relative_to(root) or hidden.exists():
        return
    missing = hidden
    while not missing.parent.exists():
        missing = missing.parent
    if missing not in survey.placeholders:
        survey.placeholders.append(missing)
