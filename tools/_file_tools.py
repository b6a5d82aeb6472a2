"""The `read_file` and `list_dir` tools, and `file_tools()`, the file-side tool set in order.

Both tools only read: they resolve the path through the permission profile, open it through
`_safe_fs` (never following a symlink swapped in after the check), never follow a symlink out
of what they were asked to show, skip corral's home inside a folder they list, and cap what they
return with a note that says how to see more. Searching is `_grep`, editing is `_apply_patch_tool`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from . import _safe_fs as safe_fs
from ._apply_patch_tool import apply_patch_tool
from ._fs_common import (
    SNIFF_BYTES,
    FileToolError,
    describe_size,
    display_path,
    is_shown,
    looks_binary,
    readable_path,
    require_file_or_dir,
    run_blocking,
)
from ._grep import grep_tool
from ._plan import update_plan_tool
from ._registry import Tool, ToolContext, ToolOutput

READ_FILE_DEFAULT_LIMIT = 2000
READ_FILE_MAX_BYTES = 32 * 1024
LIST_DIR_DEFAULT_DEPTH = 2
LIST_DIR_DEFAULT_LIMIT = 500
_COUNT_CHUNK = 1024 * 1024


def file_tools() -> list[Tool[Any]]:
    """read_file, list_dir, grep, apply_patch and update_plan, always in this order."""
    return [read_file_tool(), list_dir_tool(), grep_tool(), apply_patch_tool(), update_plan_tool()]


# -- read_file --------------------------------------------------------------------------------


class ReadFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The file to read, relative to the working directory.")
    offset: int = Field(default=1, ge=1, description="The first line to show, counting from 1.")
    limit: int = Field(
        default=READ_FILE_DEFAULT_LIMIT, ge=1, description="The most lines to show (2000)."
    )


def read_file_tool() -> Tool[ReadFileArgs]:
    return Tool(
        name="read_file",
        description=(
            "Read a text file. Lines come back numbered as `L12: text`, from `offset` (1-based) "
            f"for up to `limit` lines; output past {READ_FILE_MAX_BYTES // 1024} KiB is cut with "
            "a note telling where to continue. Binary files are refused."
        ),
        args=ReadFileArgs,
        handler=_read_file,
        mutating=False,
        parallel=True,
        side_effects=False,
    )


async def _read_file(args: ReadFileArgs, ctx: ToolContext) -> ToolOutput:
    return await run_blocking(partial(_read_text, ctx, args), args.path)


def _read_text(ctx: ToolContext, args: ReadFileArgs) -> str:
    resolved = readable_path(ctx, args.path)
    if require_file_or_dir(resolved, args.path) == "dir":
        raise FileToolError(f"{args.path} is a directory; use list_dir to see what it holds")
    with safe_fs.open_regular(resolved) as handle:
        size = os.fstat(handle.fileno()).st_size
        if looks_binary(handle.read(SNIFF_BYTES)):
            raise _binary(args.path, size)
        handle.seek(0)
        window = _Window(args.offset, args.limit, READ_FILE_MAX_BYTES)
        total = window.fill(handle, args.path, size)
    if total == 0:
        return f"[{args.path} is empty]"
    if args.offset > total:
        raise FileToolError(
            f"offset {args.offset} is past the end of {args.path}, which has {total} "
            + ("line" if total == 1 else "lines")
        )
    return window.render(total)


@dataclass
class _Window:
    """The numbered lines shown, and why the window stopped (if it did)."""

    offset: int
    limit: int
    max_bytes: int
    lines: list[str] = field(default_factory=list)
    used: int = 0
    cut_by: str = ""

    def fill(self, handle: BinaryIO, shown: str, size: int) -> int:
        """Take lines from `handle`; return the file's total line count."""
        number = 0
        for number, raw in enumerate(handle, start=1):
            if number >= self.offset and not self._take(number, raw, shown, size):
                return number + _count_lines(handle)
        return number

    def _take(self, number: int, raw: bytes, shown: str, size: int) -> bool:
        if len(self.lines) == self.limit:
            self.cut_by = "limit"
            return False
        entry = f"L{number}: {_decode(raw, shown, size, number)}"
        cost = len(entry.encode()) + 1
        if self.used + cost > self.max_bytes:
            if not self.lines:
                self.lines.append(entry.encode()[: self.max_bytes].decode(errors="ignore"))
                self.cut_by = "line"
            else:
                self.cut_by = "bytes"
            return False
        self.lines.append(entry)
        self.used += cost
        return True

    def render(self, total: int) -> str:
        last = self.offset + len(self.lines) - 1
        where = f"showing lines {self.offset}-{last} of {total}; continue with offset={last + 1}"
        notes = {
            "limit": f"[{where}]",
            "bytes": f"[output cut at {self.max_bytes} bytes; {where}]",
            "line": f"[line {last} is longer than {self.max_bytes} bytes and was cut; {where}]",
        }
        body = "\n".join(self.lines)
        return f"{body}\n{notes[self.cut_by]}" if self.cut_by else body


def _decode(raw: bytes, shown: str, size: int, number: int) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _binary(shown, size, f" (line {number} is not valid UTF-8)") from exc
    return text.removesuffix("\n").removesuffix("\r")


def _count_lines(handle: BinaryIO) -> int:
    count, last = 0, b"\n"
    while chunk := handle.read(_COUNT_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _binary(shown: str, size: int, why: str = "") -> FileToolError:
    return FileToolError(
        f"{shown} is a binary file ({describe_size(size)}){why}; read_file shows UTF-8 text only"
    )


# -- list_dir ---------------------------------------------------------------------------------


class ListDirArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(default=".", description="The directory to list (default: the cwd).")
    depth: int = Field(
        default=LIST_DIR_DEFAULT_DEPTH, ge=1, description="How many levels to descend (2)."
    )
    limit: int = Field(
        default=LIST_DIR_DEFAULT_LIMIT, ge=1, description="The most entries to show (500)."
    )


def list_dir_tool() -> Tool[ListDirArgs]:
    return Tool(
        name="list_dir",
        description=(
            "List a directory as an indented tree, sorted by name, `depth` levels deep. "
            "Directories end in `/`, symlinks in `@` (never followed); `.git` is skipped."
        ),
        args=ListDirArgs,
        handler=_list_dir,
        mutating=False,
        parallel=True,
        side_effects=False,
    )


async def _list_dir(args: ListDirArgs, ctx: ToolContext) -> ToolOutput:
    return await run_blocking(partial(_list_tree, ctx, args), args.path)


def _list_tree(ctx: ToolContext, args: ListDirArgs) -> str:
    resolved = readable_path(ctx, args.path)
    if require_file_or_dir(resolved, args.path) != "dir":
        raise FileToolError(f"{args.path} is a file, not a directory; use read_file to read it")
    listing = _Listing(ctx, args.depth, args.limit)
    with safe_fs.open_listing(resolved) as fd:
        listing.walk(fd, resolved, 1)
    lines = [f"{display_path(resolved, ctx.cwd)}/ ({resolved})"]
    lines.extend(listing.lines or ["  (empty)"])
    if listing.cut:
        lines.append(f"[listing cut at {args.limit} entries; list a subdirectory or lower depth]")
    return "\n".join(lines)


@dataclass
class _Listing:
    """The tree lines so far; folders are entered by handle, so a swapped-in symlink is not."""

    ctx: ToolContext
    depth: int
    limit: int
    lines: list[str] = field(default_factory=list)
    cut: bool = False

    def add(self, level: int, text: str) -> bool:
        if len(self.lines) == self.limit:
            self.cut = True
            return False
        self.lines.append("  " * level + text)
        return True

    def walk(self, fd: int, here: Path, level: int) -> None:
        try:
            entries = safe_fs.list_entries(fd)
        except OSError as exc:
            self.add(level, f"[cannot list: {exc.strerror or exc}]")
            return
        for entry in entries:
            # corral's home (and /proc) inside a listed folder is left out without a word.
            if entry.name == ".git" or not is_shown(self.ctx, here / entry.name):
                continue
            if not self._add_entry(fd, here, entry, level):
                return

    def _add_entry(self, fd: int, here: Path, entry: os.DirEntry[str], level: int) -> bool:
        if entry.is_symlink():
            return self.add(level, entry.name + "@")
        if not entry.is_dir(follow_symlinks=False):
            return self.add(level, entry.name)
        added = self.add(level, entry.name + "/")
        if added and level < self.depth:
            try:
                with safe_fs.open_child_dir(fd, entry.name, here / entry.name) as child:
                    self.walk(child, here / entry.name, level + 1)
            except OSError as exc:
                self.add(level + 1, f"[cannot list: {exc.strerror or exc}]")
        return added
