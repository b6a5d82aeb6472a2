"""Parsing the Codex patch format into hunks, leniently as Codex does.

Accepts markers padded with whitespace, a heredoc wrapper around the whole patch, stacked
`@@ context` headers and unified-diff style `@@ -a,b +c,d @@` headers. Only the text is read
here; locating chunks is `_seek`, and deciding and writing files is `_changeset` and `_commit`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._errors import PatchParseError

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
MOVE_TO = "*** Move to:"
END_OF_FILE = "*** End of File"

_FILE_HEADER = re.compile(r"^\*\*\* (Add|Delete|Update) File:(.*)$")
_HEREDOC_START = re.compile(r"^(?:apply_patch|applypatch)?\s*<<-?\s*(['\"]?)([A-Za-z_]\w*)\1$")
_UNIFIED_HEADER = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$")
_VALID_HEADERS = "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"


@dataclass(frozen=True)
class AddFile:
    path: str
    contents: str


@dataclass(frozen=True)
class DeleteFile:
    path: str


DiffLine = tuple[str, str]
"""A chunk line: its sign (' ' context, '-' removed, '+' added) and its text."""


@dataclass(frozen=True)
class UpdateChunk:
    """One change block: optional context headers and its diff lines."""

    contexts: tuple[str, ...]
    lines: tuple[DiffLine, ...]
    end_of_file: bool
    line_number: int

    @property
    def old_lines(self) -> tuple[str, ...]:
        return tuple(text for sign, text in self.lines if sign != "+")

    @property
    def new_lines(self) -> tuple[str, ...]:
        return tuple(text for sign, text in self.lines if sign != "-")


@dataclass(frozen=True)
class UpdateFile:
    path: str
    move_to: str | None
    chunks: tuple[UpdateChunk, ...]


Hunk = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True)
class Patch:
    hunks: tuple[Hunk, ...]


def parse_patch(text: str) -> Patch:
    """Parse a whole patch; raise `PatchParseError` naming the line that is wrong."""
    lines, first_number = _body_lines(text)
    parser = _Parser(lines, first_number)
    hunks = parser.parse_hunks()
    if not hunks:
        raise PatchParseError.patch(
            "the patch has no file operations; add an '*** Add File:', '*** Delete File:' "
            "or '*** Update File:' section between the markers"
        )
    return Patch(hunks)


def _body_lines(text: str) -> tuple[list[str], int]:
    """The lines between the Begin and End markers, and the line number of the first one."""
    stripped = text.strip()
    if not stripped:
        raise PatchParseError.patch("the patch is empty; it must start with '*** Begin Patch'")
    number = text[: len(text) - len(text.lstrip())].count("\n") + 1
    lines = [line.removesuffix("\r") for line in stripped.split("\n")]
    if not _has_envelope(lines) and _is_heredoc(lines):
        lines, number = lines[1:-1], number + 1
    if lines[0].strip() != BEGIN_PATCH:
        raise PatchParseError.patch(f"the first line of the patch must be '{BEGIN_PATCH}'")
    if len(lines) < 2 or lines[-1].strip() != END_PATCH:
        raise PatchParseError.patch(f"the last line of the patch must be '{END_PATCH}'")
    return lines[1:-1], number + 1


def _has_envelope(lines: list[str]) -> bool:
    return len(lines) >= 2 and lines[0].strip() == BEGIN_PATCH and lines[-1].strip() == END_PATCH


def _is_heredoc(lines: list[str]) -> bool:
    if len(lines) < 4:
        return False
    start = _HEREDOC_START.match(lines[0].strip())
    return start is not None and lines[-1].strip() == start.group(2)


class _Parser:
    def __init__(self, lines: list[str], first_number: int) -> None:
        self._lines = lines
        self._first = first_number
        self._i = 0

    def _number(self) -> int:
        return self._first + self._i

    def _at_end(self) -> bool:
        return self._i >= len(self._lines)

    def parse_hunks(self) -> tuple[Hunk, ...]:
        hunks: list[Hunk] = []
        while not self._at_end():
            if not self._lines[self._i].strip():
                self._i += 1
                continue
            hunks.append(self._parse_hunk())
        return tuple(hunks)

    def _parse_hunk(self) -> Hunk:
        header = self._lines[self._i].strip()
        number = self._number()
        match = _FILE_HEADER.match(header)
        if match is None:
            raise PatchParseError.hunk(
                number,
                f"'{header}' is not a valid hunk header. Valid hunk headers: {_VALID_HEADERS} "
                "(and every line of an added file starts with '+')",
            )
        kind, path = match.group(1), match.group(2).strip()
        if not path:
            raise PatchParseError.hunk(number, f"'{header}' needs a path after the colon")
        if kind == "Add":
            return self._parse_add(path)
        if kind == "Delete":
            self._i += 1
            return DeleteFile(path)
        return self._parse_update(path, number)

    def _parse_add(self, path: str) -> AddFile:
        self._i += 1
        contents: list[str] = []
        while not self._at_end() and self._lines[self._i].startswith("+"):
            contents.append(self._lines[self._i][1:] + "\n")
            self._i += 1
        return AddFile(path, "".join(contents))

    def _parse_update(self, path: str, header_number: int) -> UpdateFile:
        self._i += 1
        move_to: str | None = None
        if not self._at_end() and self._lines[self._i].strip().startswith(MOVE_TO):
            move_to = self._lines[self._i].strip().removeprefix(MOVE_TO).strip()
            if not move_to:
                raise PatchParseError.hunk(self._number(), "'*** Move to:' needs a path")
            self._i += 1
        chunks: list[UpdateChunk] = []
        while not self._at_end():
            line = self._lines[self._i]
            if not line.strip():
                self._i += 1
                continue
            if line.startswith("***"):
                break
            chunks.append(self._parse_chunk(first=not chunks))
        if not chunks:
            raise PatchParseError.hunk(
                header_number, f"the update hunk for path '{path}' is empty; add an @@ chunk"
            )
        return UpdateFile(path, move_to, tuple(chunks))

    def _parse_contexts(self, first: bool) -> tuple[str, ...]:
        contexts: list[str] = []
        seen_header = False
        while not self._at_end() and self._lines[self._i].startswith("@@"):
            seen_header = True
            context = _context_of(self._lines[self._i].strip())
            if context:
                contexts.append(context)
            self._i += 1
        if not seen_header and not first:
            line = self._lines[self._i]
            raise PatchParseError.hunk(
                self._number(),
                f"expected the update chunk to start with an @@ context marker, got: '{line}'",
            )
        return tuple(contexts)

    def _parse_chunk(self, *, first: bool) -> UpdateChunk:
        start_number = self._number()
        contexts = self._parse_contexts(first)
        lines: list[DiffLine] = []
        end_of_file = False
        while not self._at_end():
            line = self._lines[self._i]
            if line.strip() == END_OF_FILE:
                end_of_file = True
                self._i += 1
                break
            diff_line = _diff_line(line)
            if diff_line is None:
                if not lines:
                    raise PatchParseError.hunk(self._number(), _unexpected_line(line))
                break
            lines.append(diff_line)
            self._i += 1
        if not lines:
            raise PatchParseError.hunk(start_number, "the update chunk does not contain any lines")
        return UpdateChunk(contexts, tuple(lines), end_of_file, start_number)


def _context_of(header: str) -> str:
    unified = _UNIFIED_HEADER.match(header)
    if unified is not None:
        return unified.group(1)
    rest = header.removeprefix("@@")
    return rest.removeprefix(" ") if rest.strip() else ""


def _diff_line(line: str) -> DiffLine | None:
    """The sign and text of a diff line; None if `line` is not one (the chunk has ended)."""
    if line == "":
        return (" ", "")
    if line[0] in " -+":
        return (line[0], line[1:])
    return None


def _unexpected_line(line: str) -> str:
    return (
        f"unexpected line found in update hunk: '{line}'. Every line should start with "
        "' ' (context line), '+' (added line) or '-' (removed line)"
    )
