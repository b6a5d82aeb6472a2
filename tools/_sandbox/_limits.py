"""A cap on the number of processes (and threads) of one sandboxed command: no fork bomb.

Run as root, RLIMIT_NPROC does nothing (the kernel exempts uid 0), so the command goes into a
fresh `pids` cgroup of its own, when this process may create one (cgroup v1, or a v2 cgroup that
delegates `pids`). As an ordinary user, the command starts under `prlimit --nproc` inside the
sandbox's user namespace, where the count covers only the sandbox's processes, not the user's.
Root without a usable cgroup gets no limit, and says so once in the log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

DEFAULT_MAX_PROCESSES = 1024
CGROUP_ROOT = Path("/sys/fs/cgroup")
# How long the emptied cgroup may take to lose its last (killed) process before it is removed.
CGROUP_REMOVE_TIMEOUT = 2.0
_JOIN_CGROUP = 'echo $$ > "$0" && exec "$@"'
_warned: list[bool] = []
_swept: list[bool] = []
_ORPHAN = re.compile(r"corral-(\d+)-[0-9a-f]{12}")


@dataclass
class ProcessLimit:
    """How to start one command under the limit: a prefix before bwrap, one inside it."""

    outer: list[str] = field(default_factory=list)
    inner: list[str] = field(default_factory=list)
    cgroup: Path | None = None

    def close(self) -> None:
        """Remove the run's cgroup, once its killed processes have gone (best effort)."""
        if self.cgroup is None:
            return
        deadline = time.monotonic() + CGROUP_REMOVE_TIMEOUT
        while True:
            try:
                self.cgroup.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    logger.warning("could not remove the cgroup %s", self.cgroup)
                    return
                time.sleep(0.01)


def process_limit(max_processes: int | None) -> ProcessLimit:
    """The limit for one run (none when `max_processes` is None)."""
    if max_processes is None:
        return ProcessLimit()
    if os.geteuid() != 0:
        prlimit = shutil.which("prlimit", path="/usr/bin:/bin")
        if prlimit is None:
            _warn_once("prlimit (util-linux) is missing")
            return ProcessLimit()
        return ProcessLimit(inner=[prlimit, f"--nproc={max_processes}", "--"])
    cgroup = _new_pids_cgroup(max_processes)
    if cgroup is None:
        _warn_once("running as root, no pids cgroup could be created")
        return ProcessLimit()
    outer = ["/bin/sh", "-c", _JOIN_CGROUP, str(cgroup / "cgroup.procs")]
    return ProcessLimit(outer=outer, cgroup=cgroup)


def _new_pids_cgroup(max_processes: int) -> Path | None:
    parent = _pids_parent()
    if parent is None:
        return None
    if not _swept:
        _swept.append(True)
        sweep_orphan_cgroups(parent)
    cgroup = parent / f"corral-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    try:
        cgroup.mkdir()
    except OSError:
        return None
    try:
        (cgroup / "pids.max").write_text(f"{max_processes}\n")
    except OSError:
        with contextlib.suppress(OSError):
            cgroup.rmdir()
        return None
    return cgroup


def sweep_orphan_cgroups(parent: Path) -> None:
    """Remove the cgroups left by corral processes that were killed before they could remove
    their own (a SIGKILL skips `ProcessLimit.close`), ending what is still in them first: a
    command's sandbox dies with its corral (`--die-with-parent`), but one caught while bwrap was
    still setting up can be left blocked for ever. A cgroup is named after the process that made
    it, so one of a live process (perhaps just made, not yet joined) is never touched; `rmdir`
    refuses a cgroup whose processes have not gone yet, and the next sweep takes it."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        owner = _ORPHAN.fullmatch(entry.name)
        if owner is None or _alive(int(owner.group(1))):
            continue
        _kill_members(entry)
        with contextlib.suppress(OSError):
            entry.rmdir()


def _kill_members(cgroup: Path) -> None:
    """SIGKILL every process in `cgroup` (cgroup v2's `cgroup.kill` where there is one)."""
    with contextlib.suppress(OSError):
        if (cgroup / "cgroup.kill").exists():
            (cgroup / "cgroup.kill").write_text("1\n")
            return
        members = (cgroup / "cgroup.procs").read_text().split()
        for pid in members:
            if pid.isdigit():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pids_parent(proc_cgroup: Path = Path("/proc/self/cgroup")) -> Path | None:
    """Where this process's runs may get a pids cgroup: below its own cgroup (v1 or v2)."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            return CGROUP_ROOT / "pids" / path.lstrip("/")
    for line in lines:
        if line.startswith("0::"):
            own = CGROUP_ROOT / line.removeprefix("0::").lstrip("/")
            return own if _delegates_pids(own) else None
    return None


def _delegates_pids(cgroup: Path) -> bool:
    try:
        return "pids" in (cgroup / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


def _warn_once(reason: str) -> None:
    if not _warned:
        _warned.append(True)
        logger.warning("sandboxed commands run without a process limit: %s", reason)
