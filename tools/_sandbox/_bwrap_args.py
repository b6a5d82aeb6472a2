"""The bubblewrap command line for a profile: which mounts, namespaces and environment.

Mount order matters, later mounts cover earlier ones: the read-only root (the whole host, or only
the system folders, toolchains and readable roots of a profile with `readable_roots`), the private
folders (tmpfs), what must stay visible under them, the writable roots, then what is covered again
inside those: the host's listening unix sockets (without network), the protected folders
(read-only), and last corral's home (an empty read-only tmpfs). What to cover is found on disk by
`_protected` and `_host`; running the command is `_bwrap`'s business.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._netproxy import PROXY_MOUNT
from .._permissions import PermissionProfile, SandboxMode, is_within
from ._host import SYSTEM_ROOTS

_TMP = Path("/tmp")
_RUN = Path("/run")
_DEAD_END = "/dev/null"


@dataclass(frozen=True)
class HostFacts:
    """What was found on the host for one run (see `_protected` and `_host`)."""

    protected: Sequence[Path] = ()
    sockets: Sequence[Path] = ()
    toolchains: Sequence[Path] = ()
    seccomp_fd: int | None = None


def bwrap_options(
    profile: PermissionProfile,
    cwd: Path,
    environment: Mapping[str, str],
    *,
    status_fd: int,
    facts: HostFacts,
    proxy_dir: Path | None = None,
) -> list[str]:
    """The bubblewrap options that confine a command to `profile`, in mount order.

    `proxy_dir` (a network restricted by domain) is bound at `PROXY_MOUNT`: the proxy's socket.
    """
    private = _private_dirs(profile)
    writable = _writable_roots(profile)
    visible = _visible_roots(profile, facts)
    options = _root_view(visible)
    options += ["--dev", "/dev", "--proc", "/proc", "--remount-ro", "/proc"]
    for folder in private:
        options += ["--tmpfs", str(folder)]
    kept = list(_kept_visible(profile, cwd, private, writable, visible))
    for path in kept:
        options += ["--ro-bind", str(path), str(path)]
    for root in writable:
        options += ["--bind", str(root), str(root)]
    if proxy_dir is not None:
        options += ["--ro-bind", str(proxy_dir), str(PROXY_MOUNT)]
    if not direct_network(profile):
        shown = [*(visible or [Path("/")]), *writable]
        for socket in facts.sockets:
            if is_within(socket, shown) and not _hidden_by(socket, private, [*kept, *writable]):
                options += ["--ro-bind", _DEAD_END, str(socket)]
    for path in facts.protected:
        options += ["--ro-bind", str(path), str(path)]
    for hidden in profile.hidden_roots:
        if hidden.exists():
            options += ["--tmpfs", str(hidden), "--remount-ro", str(hidden)]
    return options + _process_options(profile, cwd, environment, status_fd, facts.seccomp_fd)


def _process_options(
    profile: PermissionProfile,
    cwd: Path,
    environment: Mapping[str, str],
    status_fd: int,
    seccomp_fd: int | None,
) -> list[str]:
    options = [] if direct_network(profile) else ["--unshare-net"]
    options += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"]
    # Run as root, bwrap would leave the command every capability, and CAP_SYS_ADMIN can remount
    # the read-only binds writable: drop them all.
    options += ["--cap-drop", "ALL"]
    if seccomp_fd is not None:
        options += ["--seccomp", str(seccomp_fd)]
    options.append("--clearenv")
    for name, value in environment.items():
        options += ["--setenv", name, value]
    options += ["--json-status-fd", str(status_fd), "--chdir", str(cwd)]
    return options


def direct_network(profile: PermissionProfile) -> bool:
    """Whether commands reach the network directly (not off, and not restricted to a proxy)."""
    return profile.network_mode == "on"


def _visible_roots(profile: PermissionProfile, facts: HostFacts) -> list[Path] | None:
    """What a profile with `readable_roots` sees besides its writable roots (None: all)."""
    if profile.readable_roots is None or profile.sandbox is SandboxMode.FULL_ACCESS:
        return None
    system = [p for p in SYSTEM_ROOTS if p.exists() or p.is_symlink()]
    covered = [p for p in system if not p.is_symlink()]
    wanted = [*facts.toolchains, *(r for r in profile.readable_roots if r.exists())]
    extra = [p for p in dict.fromkeys(wanted) if p not in system and not is_within(p, covered)]
    return [*system, *extra]


def _root_view(visible: Sequence[Path] | None) -> list[str]:
    if visible is None:
        return ["--ro-bind", "/", "/"]
    options: list[str] = []
    for path in visible:
        if path.is_symlink() and path in SYSTEM_ROOTS:
            options += ["--symlink", os.readlink(path), str(path)]
        else:
            options += ["--ro-bind", str(path), str(path)]
    return options


def _private_dirs(profile: PermissionProfile) -> list[Path]:
    """/tmp always; /run too without network, hiding the host's unix sockets (docker, dbus)."""
    private = [_TMP]
    if not direct_network(profile) and _RUN.is_dir() and not _RUN.is_symlink():
        private.append(_RUN)
    return private


def _writable_roots(profile: PermissionProfile) -> list[Path]:
    if profile.sandbox is not SandboxMode.WORKSPACE_WRITE:
        return []
    return [root for root in profile.writable_roots if root.exists()]


def _kept_visible(
    profile: PermissionProfile,
    cwd: Path,
    private: Sequence[Path],
    writable: Sequence[Path],
    visible: Sequence[Path] | None,
) -> Iterator[Path]:
    """Paths under a private folder that the command must still see, read-only."""
    wanted = [*(profile.readable_roots or ())]
    if visible is None:
        wanted.insert(0, Path(os.path.realpath(cwd)))
    for path in wanted:
        hidden = path not in private and is_within(path, private)
        if hidden and path.exists() and not is_within(path, writable):
            yield path


def _hidden_by(path: Path, private: Sequence[Path], exposed: Sequence[Path]) -> bool:
    """Whether `path` is already out of sight: in a private folder that nothing re-exposes."""
    return is_within(path, private) and not is_within(path, exposed)
