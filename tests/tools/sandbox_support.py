"""Shared pieces of the sandbox and shell tests: a workspace layout, tree snapshots, processes.

The layout lives under /var/tmp rather than /tmp: the sandbox gives commands a private /tmp, so a
directory under /tmp would be invisible inside it and a write there would prove nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio

from corral.tools import PermissionProfile, SandboxMode

SnapshotEntry = tuple[str, str]
# The interpreter itself, not a version-manager shim that takes a while to start.
PYTHON = os.path.realpath(sys.executable)


@dataclass(frozen=True)
class Layout:
    """A git workspace with a file, next to an outside folder it must not touch."""

    base: Path
    workspace: Path
    outside: Path

    def profile(self, mode: SandboxMode | str = SandboxMode.WORKSPACE_WRITE) -> PermissionProfile:
        return PermissionProfile.for_workspace(mode, self.workspace)


def make_layout() -> Iterator[Layout]:
    """Generator for a pytest fixture: builds the layout, yields it, removes it."""
    parent = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="corral-sandbox-", dir=parent)))
    workspace, outside = base / "ws", base / "outside"
    (workspace / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "src" / "main.py").write_text("print('hello')\n")
    outside.mkdir()
    (outside / "keep.txt").write_text("outside\n")
    try:
        yield Layout(base, workspace, outside)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def snapshot(root: Path) -> dict[str, SnapshotEntry]:
    """Every entry below `root`: its kind and its content hash, link target or mode."""
    tree: dict[str, SnapshotEntry] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            tree[str(path.relative_to(root))] = _describe(path)
    return tree


def _describe(path: Path) -> SnapshotEntry:
    if path.is_symlink():
        return ("link", os.readlink(path))
    if path.is_dir():
        return ("dir", oct(path.stat().st_mode))
    return ("file", hashlib.sha256(path.read_bytes()).hexdigest())


def processes_with_env(marker: str) -> list[int]:
    """Live (not zombie) processes whose environment contains `marker`."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ and is_alive(int(entry)):
            found.append(int(entry))
    return found


def is_alive(pid: int) -> bool:
    """Whether `pid` runs; a zombie waiting to be reaped counts as dead."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next((line for line in status.splitlines() if line.startswith("State:")), "")
    return "Z" not in state.split()[1:2]


def open_fifo(path: Path) -> int:
    """A FIFO at `path`, opened read-write so neither side blocks on open."""
    os.mkfifo(path)
    return os.open(path, os.O_RDWR | os.O_NONBLOCK)


async def read_fifo_line(fd: int) -> str:
    """Wait (up to 10 s) for one line written to the FIFO."""
    data = b""
    with anyio.fail_after(10):
        while not data.endswith(b"\n"):
            await anyio.wait_readable(fd)
            data += os.read(fd, 1024)
    return data.decode()
