"""What the read-only file tools share: their errors, path checks, and binary sniffing.

`read_file`, `list_dir` and `grep` resolve every path through the profile first, then reach it
through `_safe_fs` (no symlink swapped in since the check is followed). Walks skip corral's home
and `/proc` silently. They show paths relative to the working directory where they can, and run
their blocking work on a worker thread; errors they raise become failed outputs the model can
read::

    InvalidInput (tools._errors)
    └── FileToolError       a missing path, a binary file, a bad regex: the message says what to do
    OperationFailed (tools._errors)
    └── SearchTimedOut      grep ran past its deadline
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import anyio

from . import _safe_fs as safe_fs
from ._errors import CorralError, InvalidInput, OperationFailed, PermissionDenied
from ._registry import ToolContext, ToolOutput

SNIFF_BYTES = 8192
PROCESS_ROOT = Path("/proc")
PROCESS_REASON = (
    "/proc shows live processes, corral's own among them (its environment holds the model "
    "key); use the shell to inspect processes"
)


class FileToolError(InvalidInput):
    """A file tool was asked for something it cannot do (missing path, binary file, bad regex)."""


class SearchTimedOut(OperationFailed):
    """A search ran past its deadline; nothing it found so far is returned."""


def readable_path(ctx: ToolContext, path: str) -> Path:
    """The resolved `path`, if the profile lets the agent read it (else `PermissionDenied`)."""
    try:
        resolved = ctx.profile.check_read(path, cwd=ctx.cwd)
    except OSError as exc:  # a folder renamed while the path was being resolved
        raise FileToolError(f"cannot resolve {path}: {exc.strerror or exc}") from exc
    if resolved == PROCESS_ROOT or resolved.is_relative_to(PROCESS_ROOT):
        raise PermissionDenied(f"reading {path} is not allowed: {PROCESS_REASON}")
    return resolved


def is_shown(ctx: ToolContext, resolved: Path) -> bool:
    """Whether a walk over a parent folder may show (or enter) resolved `path`."""
    if resolved == PROCESS_ROOT or resolved.is_relative_to(PROCESS_ROOT):
        return False
    return not ctx.profile.is_hidden(resolved)


def display_path(resolved: Path, cwd: Path) -> str:
    """`resolved` relative to the working directory when it lies below it, else absolute."""
    base = Path(os.path.realpath(cwd))
    if resolved == base:
        return "."
    if resolved.is_relative_to(base):
        return str(resolved.relative_to(base))
    return str(resolved)


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file mark it as binary (a NUL byte, as git and rg decide)."""
    return b"\0" in head[:SNIFF_BYTES]


def describe_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def require_file_or_dir(resolved: Path, path: str) -> Literal["file", "dir"]:
    """Which of the two `resolved` is; refuse a missing path, and devices, pipes and sockets
    (reading one could block forever)."""
    try:
        info = safe_fs.lstat(resolved)
    except OSError as exc:
        raise FileToolError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if info is None:
        raise FileToolError(f"{path} does not exist (looked for {resolved})")
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if stat.S_ISREG(info.st_mode):
        return "file"
    raise FileToolError(
        f"{path} is not a regular file or directory (a device, pipe or socket); "
        "the file tools read only files and directories"
    )


async def run_blocking(work: Callable[[], str], shown: str) -> ToolOutput:
    """Run a blocking tool body on a worker thread; its `CorralError` (or an `OSError` from
    the disk, as when a checked folder was swapped for a symlink) becomes a failed output."""
    try:
        return ToolOutput(await anyio.to_thread.run_sync(work))
    except CorralError as exc:
        return ToolOutput.error(str(exc))
    except OSError as exc:
        return ToolOutput.error(f"cannot read {shown}: {exc.strerror or exc}")
