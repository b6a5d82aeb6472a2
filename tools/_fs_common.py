"""What the read-only file tools share: their errors, path checks, and binary sniffing.

`read_file`, `list_dir` and `grep` resolve every path through the profile first, show paths
relative to the working directory where they can, and run their blocking work on a worker
thread; errors they raise become failed outputs the model can read::

    InvalidInput (tools._errors)
    └── FileToolError       a missing path, a binary file, a bad regex: the message says what to do
    OperationFailed (tools._errors)
    └── SearchTimedOut      grep ran past its deadline
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import anyio

from ._errors import CorralError, InvalidInput, OperationFailed
from ._registry import ToolContext, ToolOutput

SNIFF_BYTES = 8192


class FileToolError(InvalidInput):
    """A file tool was asked for something it cannot do (missing path, binary file, bad regex)."""


class SearchTimedOut(OperationFailed):
    """A search ran past its deadline; nothing it found so far is returned."""


def readable_path(ctx: ToolContext, path: str) -> Path:
    """The resolved `path`, if the profile lets the agent read it (else `PermissionDenied`)."""
    return ctx.profile.check_read(path, cwd=ctx.cwd)


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


def require_file_or_dir(resolved: Path, path: str) -> None:
    """Refuse a missing path, and devices, pipes and sockets (reading one could block forever)."""
    if not resolved.exists():
        raise FileToolError(f"{path} does not exist (looked for {resolved})")
    if not (resolved.is_file() or resolved.is_dir()):
        raise FileToolError(
            f"{path} is not a regular file or directory (a device, pipe or socket); "
            "the file tools read only files and directories"
        )


async def run_blocking(work: Callable[[], str]) -> ToolOutput:
    """Run a blocking tool body on a worker thread; its `CorralError` becomes a failed output."""
    try:
        return ToolOutput(await anyio.to_thread.run_sync(work))
    except CorralError as exc:
        return ToolOutput.error(str(exc))
