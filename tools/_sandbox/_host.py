"""What the sandbox needs to know about the host: its listening unix sockets, its toolchains.

`connect` to a unix socket needs only the path, even on a read-only mount, so without network
the sandbox covers every listening socket the kernel reports (`/proc/net/unix`) with a dead
file. A profile with `readable_roots` sees only the system folders and the toolchains its PATH
names instead of the whole root. The mounts themselves are `_bwrap_args`' business.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

PROC_NET_UNIX = Path("/proc/net/unix")
# Each socket is one mount; a host with more listening sockets than this is left partly exposed.
MAX_SOCKETS = 1_000
# What any program needs to run: binaries, libraries, configuration, device and system info.
_SYSTEM = "/usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc /opt /nix /sys"
SYSTEM_ROOTS = tuple(Path(p) for p in _SYSTEM.split())
_TOOL_FOLDERS = ("bin", "sbin", "shims")


def listening_sockets(table: Path = PROC_NET_UNIX) -> list[Path]:
    """Absolute paths of the bound unix sockets in this network namespace that exist.

    Sockets bound with a relative path, or bound after this was read, are not in the list.
    """
    try:
        lines = table.read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    except OSError:
        return []
    found: dict[Path, None] = {}
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) == 8 and fields[7].startswith("/") and _is_socket(Path(fields[7])):
            found[Path(fields[7])] = None
        if len(found) >= MAX_SOCKETS:
            break
    return list(found)


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def toolchain_roots(environment: Mapping[str, str]) -> list[Path]:
    """The folders a limited reader still needs for the programs on its PATH.

    Each PATH folder, and for `bin`/`sbin`/`shims` folders their installation (a venv, pyenv,
    cargo), but never the home folder, `~/.local` or `/` as a whole; for a venv, the Python it
    was made from.
    """
    home = Path(environment.get("HOME", "/nonexistent"))
    never = {Path("/"), home, home / ".local"}
    roots: dict[Path, None] = {}
    for entry in environment.get("PATH", "").split(":"):
        folder = Path(entry)
        if not folder.is_absolute() or not folder.is_dir():
            continue
        roots.update(dict.fromkeys(_install_of(folder, never)))
    return list(roots)


def _install_of(folder: Path, never: Iterable[Path]) -> list[Path]:
    found = [folder, Path(os.path.realpath(folder))]
    prefix = folder.parent
    if folder.name not in _TOOL_FOLDERS or prefix in never:
        return found
    found.append(prefix)
    base = _venv_base(prefix / "pyvenv.cfg")
    if base is not None and base not in never:
        found.append(base)
    return found


def _venv_base(config: Path) -> Path | None:
    """The installation a venv's Python comes from (`home = .../bin` in `pyvenv.cfg`)."""
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip() == "home":
            return Path(os.path.realpath(value.strip())).parent
    return None
