"""The `grep` tool: a regex search over files, listed by ripgrep when it is installed.

ripgrep only lists the files to search (`rg --files`, under a deadline); a pure-Python walk
stands in when `rg` is missing (or when asked, for tests). corral itself opens and reads every
file through `_safe_fs` from a handle of the folder searched, so a folder swapped for a symlink
mid-search is never read through, and matches with Python's `re`. Both listings skip `.git`,
corral's home, binary files and symlinks, visit files in the same order, and answer in the same
`path:line:text` form. ripgrep also honours `.gitignore`/`.ignore` files, which the walk does not.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import partial
from pathlib import Path
from typing import BinaryIO

import anyio
from anyio.abc import ByteReceiveStream
from pydantic import BaseModel, ConfigDict, Field

from . import _safe_fs as safe_fs
from ._errors import CorralError
from ._fs_common import (
    SNIFF_BYTES,
    FileToolError,
    SearchTimedOut,
    describe_size,
    display_path,
    is_shown,
    looks_binary,
    readable_path,
    require_file_or_dir,
)
from ._registry import Tool, ToolContext, ToolOutput

GREP_DEFAULT_LIMIT = 100
GREP_TIMEOUT_SECONDS = 30.0
GREP_MAX_LINE_CHARS = 300
_STDERR_CAP = 4096
# A listing past this many bytes of paths is cut: the search then covers the files listed so far.
_LISTING_CAP = 64 * 1024 * 1024


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(description="The regular expression to look for, one line at a time.")
    path: str = Field(default=".", description="The file or directory to search (default: cwd).")
    include: str | None = Field(
        default=None, description="Search only files matching this glob, e.g. `*.py`."
    )
    limit: int = Field(default=GREP_DEFAULT_LIMIT, ge=1, description="The most matches (100).")


@dataclass(frozen=True)
class Match:
    path: str
    line: int
    text: str

    def render(self) -> str:
        text = self.text
        if len(text) > GREP_MAX_LINE_CHARS:
            text = text[:GREP_MAX_LINE_CHARS] + "…"
        return f"{self.path}:{self.line}:{text}"


def grep_tool(*, use_ripgrep: bool = True) -> Tool[GrepArgs]:
    """The grep tool; with `use_ripgrep=False` it always searches in Python."""

    async def handle(args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        try:
            return ToolOutput(await _grep(args, ctx, use_ripgrep=use_ripgrep))
        except CorralError as exc:
            return ToolOutput.error(str(exc))

    return Tool(
        name="grep",
        description=(
            "Search file contents for a regular expression. Answers `path:line:text` lines "
            "sorted by path, at most `limit` of them; `include` narrows the files by glob. "
            "Skips .git, binary files and symlinks. Python `re` syntax."
        ),
        args=GrepArgs,
        handler=handle,
        mutating=False,
        parallel=True,
        side_effects=False,
    )


async def _grep(args: GrepArgs, ctx: ToolContext, *, use_ripgrep: bool) -> str:
    if not args.pattern:
        raise FileToolError("the pattern is empty; give a regular expression to search for")
    regex = _compile(args.pattern)
    root, kind, cwd = await anyio.to_thread.run_sync(_search_root, ctx, args.path)
    found = _Found(args.limit, cwd, args.path)
    deadline = time.monotonic() + GREP_TIMEOUT_SECONDS
    rg = shutil.which("rg") if use_ripgrep and kind == "dir" else None
    listed = None if rg is None else await _list_with_rg(rg, args, root)
    search = partial(_search, ctx, args, root, kind, listed, regex, found, deadline)
    try:
        await anyio.to_thread.run_sync(search)
    except OSError as exc:
        raise FileToolError(f"grep could not search {args.path}: {exc.strerror or exc}") from exc
    if not found.matches:
        return f"No matches for {args.pattern!r} (searched {args.path})"
    lines = [m.render() for m in found.matches]
    if found.cut:
        lines.append(f"[results cut at {args.limit} matches; narrow the pattern, path or include]")
    return "\n".join(lines)


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise FileToolError(f"invalid regex {pattern!r}: {exc}") from exc


def _search_root(ctx: ToolContext, path: str) -> tuple[Path, str, Path]:
    """The resolved search path, checked; whether it is a file or a folder; the resolved cwd."""
    resolved = readable_path(ctx, path)
    kind = require_file_or_dir(resolved, path)
    if kind == "file":
        try:
            with safe_fs.open_regular(resolved) as handle:
                head, size = handle.read(SNIFF_BYTES), os.fstat(handle.fileno()).st_size
        except OSError as exc:
            raise FileToolError(f"cannot read {path}: {exc.strerror or exc}") from exc
        if looks_binary(head):
            raise FileToolError(
                f"{path} is a binary file ({describe_size(size)}); grep searches text only"
            )
    return resolved, kind, Path(os.path.realpath(ctx.cwd))


@dataclass
class _Found:
    """Matches collected so far, and whether more were left out."""

    limit: int
    cwd: Path
    searched: str
    matches: list[Match] = field(default_factory=list)
    cut: bool = False

    def add(self, path: Path, line: int, text: str) -> bool:
        if len(self.matches) == self.limit:
            self.cut = True
            return False
        self.matches.append(Match(display_path(path, self.cwd), line, text.removesuffix("\r")))
        return True


# -- listing with ripgrep ---------------------------------------------------------------------


def _rg_argv(rg: str, args: GrepArgs, root: Path) -> list[str]:
    argv = [rg, "--no-config", "--files", "--null", "--sort=path", "--hidden", "--glob=!.git"]
    if args.include:
        argv += ["--glob", args.include]
    return [*argv, "--", str(root)]


async def _list_with_rg(rg: str, args: GrepArgs, root: Path) -> list[tuple[str, ...]]:
    """The files below `root` that rg would search, as parts relative to `root`."""
    stdout, stderr = bytearray(), bytearray()
    try:
        with anyio.fail_after(GREP_TIMEOUT_SECONDS):
            code = await _run_rg(_rg_argv(rg, args, root), stdout, stderr)
    except TimeoutError as exc:
        raise SearchTimedOut(_timeout_message(args.path)) from exc
    message = stderr.decode(errors="replace").strip()
    if code == 2 and not stdout and message:
        raise FileToolError(f"grep could not search {args.path}: {message}")
    listed = []
    for raw in bytes(stdout).split(b"\0"):
        path = Path(os.fsdecode(raw))
        if raw and path.is_relative_to(root) and path != root:
            listed.append(path.relative_to(root).parts)
    return listed


async def _run_rg(argv: list[str], stdout: bytearray, stderr: bytearray) -> int:
    async with await anyio.open_process(argv, stdin=subprocess.DEVNULL) as process:
        assert process.stdout is not None and process.stderr is not None
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain, process.stderr, stderr, _STDERR_CAP)
            async for chunk in process.stdout:
                stdout.extend(chunk)
                if len(stdout) > _LISTING_CAP:
                    del stdout[stdout.rfind(b"\0") + 1 :]
                    process.kill()
                    break
        return await process.wait()


async def _drain(stream: ByteReceiveStream, into: bytearray, cap: int) -> None:
    async for chunk in stream:
        into.extend(chunk[: max(0, cap - len(into))])


# -- reading and matching ---------------------------------------------------------------------

_Opener = Callable[[], BinaryIO]
# How many lines of one file are matched between two looks at the deadline.
_LINES_PER_CHECK = 4096


def _search(
    ctx: ToolContext,
    args: GrepArgs,
    root: Path,
    kind: str,
    listed: list[tuple[str, ...]] | None,
    regex: re.Pattern[str],
    found: _Found,
    deadline: float,
) -> None:
    if kind == "file":
        _search_file(root, partial(safe_fs.open_regular, root), regex, found, deadline)
        return
    with safe_fs.open_listing(root) as root_fd:
        if listed is None:
            files = _walk_files(ctx, root_fd, root, root, args.include)
        else:
            files = _listed_files(ctx, root_fd, root, listed)
        for path, opener in files:
            if not _search_file(path, opener, regex, found, deadline):
                return


def _listed_files(
    ctx: ToolContext, root_fd: int, root: Path, listed: list[tuple[str, ...]]
) -> Iterator[tuple[Path, _Opener]]:
    """rg's list, each file opened from the root's handle (rg's own walk is not trusted)."""
    for parts in listed:
        path = root.joinpath(*parts)
        if any(not is_shown(ctx, root.joinpath(*parts[:n])) for n in range(1, len(parts) + 1)):
            continue
        yield path, partial(safe_fs.open_file_below, root_fd, parts, path)


def _walk_files(
    ctx: ToolContext, fd: int, here: Path, root: Path, include: str | None
) -> Iterator[tuple[Path, _Opener]]:
    """Files below the open folder `fd` in rg's `--sort=path` order: by name, depth first."""
    try:
        entries = safe_fs.list_entries(fd)
    except OSError:
        return
    for entry in entries:
        path = here / entry.name
        if entry.name == ".git" or entry.is_symlink() or not is_shown(ctx, path):
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _walk_child(ctx, fd, path, root, include)
        elif entry.is_file(follow_symlinks=False) and _included(path, root, include):
            yield path, partial(safe_fs.open_child_file, fd, entry.name, path)


def _walk_child(
    ctx: ToolContext, fd: int, path: Path, root: Path, include: str | None
) -> Iterator[tuple[Path, _Opener]]:
    try:
        with safe_fs.open_child_dir(fd, path.name, path) as child:
            yield from _walk_files(ctx, child, path, root, include)
    except OSError:
        return


def _included(path: Path, root: Path, include: str | None) -> bool:
    if not include:
        return True
    if "/" in include:
        return fnmatchcase(path.relative_to(root).as_posix(), include.removeprefix("/"))
    return fnmatchcase(path.name, include)


def _search_file(
    path: Path, opener: _Opener, regex: re.Pattern[str], found: _Found, deadline: float
) -> bool:
    """Match one file line by line (a file that cannot be opened safely is skipped)."""
    try:
        with opener() as handle:
            if looks_binary(handle.read(SNIFF_BYTES)):
                return True
            handle.seek(0)
            return _search_lines(path, handle, regex, found, deadline)
    except OSError:
        return True


def _search_lines(
    path: Path, handle: BinaryIO, regex: re.Pattern[str], found: _Found, deadline: float
) -> bool:
    for number, raw in enumerate(handle, start=1):
        if number % _LINES_PER_CHECK == 1 and time.monotonic() > deadline:
            raise SearchTimedOut(_timeout_message(found.searched))
        line = raw.decode(errors="replace").removesuffix("\n")
        if regex.search(line.removesuffix("\r")) and not found.add(path, number, line):
            return False
    return True


def _timeout_message(path: str) -> str:
    return (
        f"grep timed out after {GREP_TIMEOUT_SECONDS:.0f} s searching {path}; "
        "search a smaller path or narrow the include glob"
    )
