"""Loads AGENTS.md instructions and renders them as one user-role fragment.

The global file comes first, then one file per directory from the project root down to the
working directory, under a shared byte budget; each part keeps the path it came from, so the
model and the UI can tell which file said what. The budget counts the files as written; the
`@if` blocks (`_agents_md_conditions`) are then kept or dropped. Loading reads files (call it
off the event loop); rendering is pure.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from corral.tools import is_within
from corral.tools._errors import InvalidInput
from corral.tools._safe_fs import open_regular

from ._agents_md_conditions import apply_conditions
from ._fragments import USER_INSTRUCTIONS
from ._project_facts import ProjectFacts

logger = logging.getLogger(__name__)

Decide = Callable[[Path, str], str]
"""Decides a file's `@if` blocks: (its path, its text as read) to the text to send."""
Decode = Callable[[Path, bytes], str]
"""Turns a file's bytes into its text, warning about bytes that are not UTF-8."""

OVERRIDE_NAME = "AGENTS.override.md"
DEFAULT_NAME = "AGENTS.md"
DEFAULT_MAX_BYTES = 32 * 1024


class AgentsMdError(InvalidInput):
    """An AGENTS.md file exists but cannot be used: unreadable, or binary (a NUL byte)."""


@dataclass(frozen=True)
class AgentsMdPart:
    """The trimmed text of one file; `truncated` when the budget cut it short."""

    path: Path
    text: str
    truncated: bool


@dataclass(frozen=True)
class AgentsMd:
    """The instructions that apply in `cwd`: global part first, then root down to `cwd`."""

    cwd: Path
    parts: tuple[AgentsMdPart, ...]
    warnings: tuple[str, ...] = ()
    """Malformed `@if` blocks and refused conditions, each naming its file and line."""

    @property
    def sources(self) -> tuple[Path, ...]:
        return tuple(part.path for part in self.parts)

    def render(self) -> str | None:
        """The user-instructions fragment, each part under a line naming its source."""
        if not self.parts:
            return None
        body = "\n\n".join(f"<!-- source: {part.path} -->\n{part.text}" for part in self.parts)
        return USER_INSTRUCTIONS.render(f"{self.cwd}\n\n<INSTRUCTIONS>\n{body}\n")


def load_agents_md(
    cwd: Path,
    *,
    home: Path,
    fallback_names: Sequence[str] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
    root_markers: Sequence[str] = (".git",),
    environment: str | None = None,
) -> AgentsMd:
    """Find and read the AGENTS.md files that apply in `cwd`, their `@if` blocks decided for
    this project and `environment`.

    `home` holds the global file (not counted against `max_bytes`); `max_bytes` 0 turns the
    project files off. Raises `AgentsMdError` for a file that exists but cannot be used.
    """
    dirs = _search_dirs(cwd.resolve(), root_markers)
    facts = ProjectFacts(dirs[0], folders=dirs, environment=environment, hidden=(home.resolve(),))
    warnings: list[str] = []

    def decide(path: Path, text: str) -> str:
        # Before any trimming, so that a warning's line number is the file's own.
        return apply_conditions(text, path=path, facts=facts, warn=warnings.append)

    def decode(path: Path, data: bytes) -> str:
        return _decode(path, data, warnings.append)

    parts: list[AgentsMdPart] = []
    global_part = _load_global(home, decode, decide)
    if global_part is not None:
        parts.append(global_part)
    if max_bytes > 0:
        names = _candidate_names(fallback_names)
        found = [p for d in dirs if (p := _pick(d, names))]
        readable = [p for p in found if _readable(p, home, warnings.append)]
        parts.extend(_load_budgeted(readable, max_bytes, decode, decide))
    unique = tuple(dict.fromkeys(warnings))
    for warning in unique:
        _warn_once(warning)
    return AgentsMd(cwd=cwd, parts=tuple(parts), warnings=unique)


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    # AGENTS.md is read again for every turn; a broken block is told once per process.
    if message not in _warned:
        _warned.add(message)
        logger.warning("AGENTS.md: %s", message)


def _load_global(home: Path, decode: Decode, decide: Decide) -> AgentsMdPart | None:
    """The first non-empty global file (an empty override falls back to AGENTS.md), its
    blocks decided; None when they leave nothing."""
    for name in (OVERRIDE_NAME, DEFAULT_NAME):
        path = home / name
        if path.is_file():
            text = decode(path, _read(path, limit=None))
            if text.strip():
                text = decide(path, text).strip()
                return AgentsMdPart(path=path, text=text, truncated=False) if text else None
    return None


def _candidate_names(fallback_names: Sequence[str]) -> tuple[str, ...]:
    names = [OVERRIDE_NAME, DEFAULT_NAME, *(n for n in fallback_names if n)]
    return tuple(dict.fromkeys(names))


def _search_dirs(cwd: Path, root_markers: Sequence[str]) -> list[Path]:
    """The directories from the project root down to `cwd`, or just `cwd` without a root."""
    upward = [cwd, *cwd.parents]
    for depth, directory in enumerate(upward):
        if any((directory / marker).exists() for marker in root_markers):
            return upward[depth::-1]
    return [cwd]


def _pick(directory: Path, names: tuple[str, ...]) -> Path | None:
    """The first candidate that is a regular file; folders and FIFOs are not instructions."""
    return next((directory / n for n in names if (directory / n).is_file()), None)


def _readable(path: Path, home: Path, warn: Callable[[str], None]) -> bool:
    """Whether a project's file may be read: a symlink (a repository can ship one) must not
    lead into corral's home (the API token, the journal), which no agent may read; through
    `/proc/self/root` or an open descriptor too, since the path is resolved first."""
    real = path.resolve()
    if is_within(real, [home.resolve()]):
        warn(f"{path} leads to {real}, which agents may not read; not read")
        return False
    return True


def _load_budgeted(
    paths: list[Path], max_bytes: int, decode: Decode, decide: Decide
) -> Iterator[AgentsMdPart]:
    remaining = max_bytes
    for path in paths:
        data = _read(path, limit=remaining + 1)
        cut = _utf8_boundary(data, remaining)
        truncated = cut < len(data)
        text = decide(path, decode(path, data[:cut])).strip()
        remaining = 0 if truncated else remaining - cut
        if truncated:
            omitted = max(_size(path) - cut, 1)
            text = "\n\n".join(filter(None, (text, _marker(omitted, path, max_bytes))))
        if text:
            yield AgentsMdPart(path=path, text=text, truncated=truncated)


def _utf8_boundary(data: bytes, limit: int) -> int:
    """The largest cut at or below `limit` that does not split a UTF-8 character."""
    if len(data) <= limit:
        return len(data)
    cut = limit
    while cut > 0 and data[cut] & 0xC0 == 0x80:
        cut -= 1
    return cut


def _marker(omitted: int, path: Path, max_bytes: int) -> str:
    budget = f"{max_bytes // 1024} KiB" if max_bytes % 1024 == 0 else f"{max_bytes} bytes"
    return f"[… truncated: {omitted} bytes of {path} omitted to fit the {budget} AGENTS.md budget]"


def _read(path: Path, *, limit: int | None) -> bytes:
    try:
        # The path as resolved when it was checked, opened without following a symlink that
        # was swapped in since.
        with open_regular(path.resolve()) as file:
            return file.read() if limit is None else file.read(limit)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise AgentsMdError(f"cannot read {path}: {reason}; make it readable or remove it") from exc


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _decode(path: Path, data: bytes, warn: Callable[[str], None]) -> str:
    """The file's text with a byte-order mark dropped and CRLF or CR line ends made LF, so
    that `@if` lines and the budget's marker read the same whatever editor saved the file."""
    if b"\0" in data:
        raise AgentsMdError(
            f"{path} contains a NUL byte and looks binary; AGENTS.md files must be UTF-8 text, "
            "so replace or remove it"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # As Codex does (a lossy read): one stray Latin-1 byte in a repository's file should
        # not stop every run there; the file is named so it can be fixed.
        warn(
            f"{path} is not valid UTF-8 (byte {exc.start}); read with U+FFFD in place of the "
            "bad bytes: save it as UTF-8"
        )
        text = data.decode("utf-8", errors="replace")
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")
