"""The bubblewrap command line for a profile: which mounts, namespaces and environment.

Mount order matters: the read-only root first, then the private folders (tmpfs), then what must
stay visible under them, then the writable roots, and last the `.git` folders made read-only
again inside those roots. Running the command is `_bwrap`'s business.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from .._permissions import PermissionProfile, SandboxMode, is_within

_TMP = Path("/tmp")
_RUN = Path("/run")


def bwrap_options(
    profile: PermissionProfile, cwd: Path, environment: Mapping[str, str], *, status_fd: int
) -> list[str]:
    """The bubblewrap options that confine a command to `profile`, in mount order."""
    private = _private_dirs(profile)
    writable = _writable_roots(profile)
    options = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--remount-ro", "/proc"]
    for folder in private:
        options += ["--tmpfs", str(folder)]
    for path in _kept_visible(profile, cwd, private, writable):
        options += ["--ro-bind", str(path), str(path)]
    for root in writable:
        options += ["--bind", str(root), str(root)]
    if not profile.git_writable:
        for path in _git_paths(writable):
            options += ["--ro-bind", str(path), str(path)]
    if not profile.network:
        options.append("--unshare-net")
    options += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"]
    # Run as root, bwrap would leave the command every capability, and CAP_SYS_ADMIN can remount
    # the read-only binds writable: drop them all.
    options += ["--cap-drop", "ALL"]
    options.append("--clearenv")
    for name, value in environment.items():
        options += ["--setenv", name, value]
    options += ["--json-status-fd", str(status_fd), "--chdir", str(cwd)]
    return options


def _private_dirs(profile: PermissionProfile) -> list[Path]:
    """/tmp always; /run too without network, hiding the host's unix sockets (docker, dbus)."""
    private = [_TMP]
    if not profile.network and _RUN.is_dir() and not _RUN.is_symlink():
        private.append(_RUN)
    return private


def _writable_roots(profile: PermissionProfile) -> list[Path]:
    if profile.sandbox is not SandboxMode.WORKSPACE_WRITE:
        return []
    return [root for root in profile.writable_roots if root.exists()]


def _kept_visible(
    profile: PermissionProfile, cwd: Path, private: Sequence[Path], writable: Sequence[Path]
) -> Iterator[Path]:
    """Paths under a private folder that the command must still see, read-only."""
    wanted = [Path(os.path.realpath(cwd)), *(profile.readable_roots or ())]
    for path in wanted:
        hidden = path not in private and is_within(path, private)
        if hidden and path.exists() and not is_within(path, writable):
            yield path


def _git_paths(writable: Sequence[Path]) -> Iterator[Path]:
    """Each root's `.git` (folder or worktree file) and the git dir a worktree file points at."""
    for root in writable:
        dot_git = root / ".git"
        if not dot_git.exists():
            continue
        target = Path(os.path.realpath(dot_git))
        if is_within(target, writable):
            yield target
        if dot_git.is_file() and not dot_git.is_symlink():
            gitdir = _worktree_gitdir(dot_git)
            if gitdir is not None and gitdir != target and is_within(gitdir, writable):
                yield gitdir


def _worktree_gitdir(dot_git: Path) -> Path | None:
    try:
        first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[:1]
    except OSError:
        return None
    if not first or not first[0].startswith("gitdir:"):
        return None
    gitdir = Path(os.path.realpath(dot_git.parent / first[0].removeprefix("gitdir:").strip()))
    return gitdir if gitdir.exists() else None
