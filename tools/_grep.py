"""The `grep` tool: a regex search over files, by ripgrep when it is installed.

ripgrep runs as a subprocess under a deadline and is stopped once enough matches are in; a
pure-Python walk stands in when `rg` is missing (or when asked, for tests). Both skip `.git`,
binary files and symlinks, visit files in the same order, and answer in the same `path:line:text`
form. ripgrep also honours `.gitignore`/`.ignore` files, which the fallback does not read.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import partial
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream
from pydantic import BaseModel, ConfigDict, Field

from ._errors import CorralError
from ._fs_common import (
    SNIFF_BYTES,
    FileToolError,
    SearchTimedOut,
    describe_size,
    display_path,
    looks_binary,
    readable_path,
    require_file_or_dir,
)
from ._registry import Tool, ToolContext, ToolOutput

GREP_DEFAULT_LIMIT = 100
GREP_TIMEOUT_SECONDS = 30.0
GREP_MAX_LINE_CHARS = 300
# rg cuts longer lines itself; the cap sits well above GREP_MAX_LINE_CHARS (4 bytes a char at
# worst) so both backends show the same first characters.
_RG_MAX_COLUMNS = 2000
_STDERR_CAP = 4096


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
            "Skips .git, binary files and symlinks."
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
    resolved, base = await anyio.to_thread.run_sync(_search_root, ctx, args.path)
    found = _Found(args.limit, base)
    rg = shutil.which("rg") if use_ripgrep else None
    if rg is None:
        await anyio.to_thread.run_sync(partial(_search_in_python, args, resolved, found))
    else:
        await _search_with_rg(rg, args, resolved, found)
    if not found.matches:
        return f"No matches for {args.pattern!r} (searched {args.path})"
    lines = [m.render() for m in found.matches]
    if found.cut:
        lines.append(f"[results cut at {args.limit} matches; narrow the pattern, path or include]")
    return "\n".join(lines)


def _search_root(ctx: ToolContext, path: str) -> tuple[Path, Path]:
    """The resolved search path, checked, and the resolved cwd that results are shown from."""
    resolved = readable_path(ctx, path)
    require_file_or_dir(resolved, path)
    if resolved.is_file():
        with resolved.open("rb") as handle:
            if looks_binary(handle.read(SNIFF_BYTES)):
                size = describe_size(resolved.stat().st_size)
                raise FileToolError(f"{path} is a binary file ({size}); grep searches text only")
    return resolved, Path(os.path.realpath(ctx.cwd))


@dataclass
class _Found:
    """Matches collected so far, and whether more were left out."""

    limit: int
    cwd: Path
    matches: list[Match] = field(default_factory=list)
    cut: bool = False

    def add(self, path: Path, line: int, text: str) -> bool:
        if len(self.matches) == self.limit:
            self.cut = True
            return False
        self.matches.append(Match(display_path(path, self.cwd), line, text.removesuffix("\r")))
        return True


# -- ripgrep ----------------------------------------------------------------------------------


def _rg_argv(rg: str, args: GrepArgs, root: Path) -> list[str]:
    argv = [rg, "--no-config", "--null", "--line-number", "--with-filename", "--no-heading"]
    argv += ["--color=never", "--sort=path", "--hidden", "--glob=!.git"]
    argv += [f"--max-columns={_RG_MAX_COLUMNS}", "--max-columns-preview"]
    if args.include:
        argv += ["--glob", args.include]
    return [*argv, "--regexp", args.pattern, "--", str(root)]


async def _search_with_rg(rg: str, args: GrepArgs, root: Path, found: _Found) -> None:
    stderr = bytearray()
    try:
        with anyio.fail_after(GREP_TIMEOUT_SECONDS):
            code = await _run_rg(_rg_argv(rg, args, root), found, stderr)
    except TimeoutError as exc:
        raise SearchTimedOut(_timeout_message(args.path)) from exc
    message = stderr.decode(errors="replace").strip()
    if code == 2 and not found.matches and message:
        if "regex parse error" in message:
            raise FileToolError(f"invalid regex {args.pattern!r}: {message}")
        raise FileToolError(f"grep could not search {args.path}: {message}")


async def _run_rg(argv: list[str], found: _Found, stderr: bytearray) -> int:
    async with await anyio.open_process(argv, stdin=subprocess.DEVNULL) as process:
        assert process.stdout is not None and process.stderr is not None
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain, process.stderr, stderr)
            pending = b""
            async for chunk in process.stdout:
                *lines, pending = (pending + chunk).split(b"\n")
                if not all(_add_rg_line(raw, found) for raw in lines):
                    process.kill()
                    break
        return await process.wait()


async def _drain(stream: ByteReceiveStream, into: bytearray) -> None:
    async for chunk in stream:
        into.extend(chunk[: max(0, _STDERR_CAP - len(into))])


def _add_rg_line(raw: bytes, found: _Found) -> bool:
    path, sep, rest = raw.partition(b"\0")
    number, colon, text = rest.partition(b":")
    if not sep or not colon or not number.isdigit():
        return True
    return found.add(Path(os.fsdecode(path)), int(number), text.decode(errors="replace"))


# -- the Python fallback ----------------------------------------------------------------------


def _search_in_python(args: GrepArgs, root: Path, found: _Found) -> None:
    try:
        regex = re.compile(args.pattern)
    except re.error as exc:
        raise FileToolError(f"invalid regex {args.pattern!r}: {exc}") from exc
    deadline = time.monotonic() + GREP_TIMEOUT_SECONDS
    files = iter([root]) if root.is_file() else _walk_files(root, root, args.include)
    for file in files:
        if time.monotonic() > deadline:
            raise SearchTimedOut(_timeout_message(args.path))
        if not _search_file(file, regex, found):
            return


def _walk_files(directory: Path, root: Path, include: str | None) -> Iterator[Path]:
    """Files below `directory` in rg's `--sort=path` order: by name, depth first."""
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name == ".git" or entry.is_symlink():
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            yield from _walk_files(path, root, include)
        elif entry.is_file(follow_symlinks=False) and _included(path, root, include):
            yield path


def _included(path: Path, root: Path, include: str | None) -> bool:
    if not include:
        return True
    if "/" in include:
        return fnmatchcase(path.relative_to(root).as_posix(), include.removeprefix("/"))
    return fnmatchcase(path.name, include)


def _search_file(path: Path, regex: re.Pattern[str], found: _Found) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return True
    if looks_binary(data):
        return True
    lines = data.decode(errors="replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if regex.search(line.removesuffix("\r")) and not found.add(path, number, line):
            return False
    return True


def _timeout_message(path: str) -> str:
    return (
        f"grep timed out after {GREP_TIMEOUT_SECONDS:.0f} s searching {path}; "
        "search a smaller path or narrow the include glob"
    )
