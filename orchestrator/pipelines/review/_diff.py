"""Parsing a unified diff (git's or any `diff -u`) into files and hunks, with new-file line numbers.

A hunk's body is read by its header's line counts, so a removed line that starts with `--- ` is
never mistaken for a file header, and text around the diff (a commit message, a mail signature)
is ignored. Binary files and files without hunks are kept, marked, so the report can name them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._errors import PatchError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DEV_NULL = "/dev/null"
_OCTAL = re.compile(r"\\[0-7]{3}")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f"}


@dataclass(frozen=True)
class Hunk:
    """One `@@` block: its header line and body lines (each with its ` `, `+`, `-` or `\\`)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    header: str
    lines: tuple[str, ...]

    @property
    def added(self) -> tuple[int, ...]:
        """New-file numbers of the lines this hunk adds or changes."""
        return tuple(number for number, kind, _ in self.numbered() if kind == "+")

    @property
    def anchors(self) -> tuple[int, ...]:
        """New-file lines the change touches: added ones, and both neighbours of a removal."""
        found: set[int] = set()
        for number, kind, _ in self.numbered():
            if kind == "+":
                found.add(number)
            elif kind == "-":
                found.update(n for n in (number - 1, number) if n >= 1)
        return tuple(sorted(found))

    @property
    def changed_count(self) -> int:
        """Lines added plus lines removed: the size of the hunk for splitting."""
        return sum(1 for line in self.lines if line[:1] in ("+", "-"))

    def numbered(self) -> list[tuple[int, str, str]]:
        """(new-file line, kind, text) per body line; a removed line gets the number of the new
        line it stood before."""
        out: list[tuple[int, str, str]] = []
        number = self.new_start
        for line in self.lines:
            kind, text = (line[:1] or " "), line[1:]
            if kind == "\\":
                continue
            out.append((number, kind, text))
            if kind != "-":
                number += 1
        return out

    def new_text(self) -> dict[int, str]:
        """The text of each new-file line this hunk shows (context and added)."""
        return {n: text for n, kind, text in self.numbered() if kind != "-"}

    def render(self) -> str:
        return "\n".join((self.header, *self.lines))


@dataclass(frozen=True)
class FileDiff:
    """The change to one file. `path` is the new path (the old one for a deleted file)."""

    path: str
    old_path: str | None
    new_path: str | None
    header: tuple[str, ...]
    hunks: tuple[Hunk, ...]
    binary: bool = False

    @property
    def deleted(self) -> bool:
        return self.new_path is None

    @property
    def skip_reason(self) -> str | None:
        """Why this file has nothing to review in its new version, or None if it has."""
        if self.binary:
            return "binary file"
        if self.deleted:
            return "file deleted"
        if not self.hunks:
            return "no text changes (mode or rename only)"
        return None

    def render(self, hunks: tuple[Hunk, ...] | None = None) -> str:
        """The diff of this file as text: its header lines, then `hunks` (default: all)."""
        chosen = self.hunks if hunks is None else hunks
        return "\n".join((*self.header, *(h.render() for h in chosen)))


@dataclass
class _FileBuilder:
    header: list[str] = field(default_factory=list)
    hunks: list[Hunk] = field(default_factory=list)
    git_paths: tuple[str | None, str | None] = (None, None)
    old: str | None = None
    new: str | None = None
    saw_old: bool = False
    saw_new: bool = False
    binary: bool = False
    deleted: bool = False

    def build(self) -> FileDiff | None:
        old = self.old if self.saw_old else self.git_paths[0]
        new = self.new if self.saw_new else self.git_paths[1]
        if self.deleted and not self.saw_new:
            new = None
        path = new or old
        if path is None:
            return None
        return FileDiff(path, old, new, tuple(self.header), tuple(self.hunks), self.binary)


def parse_unified_diff(text: str, *, source: str = "the diff") -> list[FileDiff]:
    """The files of a unified diff; a hunk that ends early is a `PatchError` naming its line."""
    # Only "\n" ends a diff line: a form feed or U+2028 inside a source line is its content.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return _Parser(lines, source).run()


class _Parser:
    def __init__(self, lines: list[str], source: str) -> None:
        self.lines = lines
        self.source = source
        self.files: list[FileDiff] = []
        self.current: _FileBuilder | None = None

    def run(self) -> list[FileDiff]:
        at = 0
        while at < len(self.lines):
            at = self._step(at)
        self._flush()
        return self.files

    def _step(self, at: int) -> int:
        line = self.lines[at]
        if line.startswith("diff --git "):
            self._start(_FileBuilder(git_paths=_git_header_paths(line[len("diff --git ") :])))
            self._header(line)
        elif line.startswith("--- ") and self._next_is_new_path(at):
            if self.current is None or self.current.hunks or self.current.saw_old:
                self._start(_FileBuilder())
            self._set_old(line[4:])
            self._header(line)
        elif line.startswith("+++ ") and self.current is not None and not self.current.hunks:
            self._set_new(line[4:])
            self._header(line)
        elif line.startswith("@@ ") and self.current is not None:
            return self._hunk(at)
        elif self.current is not None and not self.current.hunks:
            self._meta(line)
        return at + 1

    def _next_is_new_path(self, at: int) -> bool:
        return at + 1 < len(self.lines) and self.lines[at + 1].startswith("+++ ")

    def _start(self, builder: _FileBuilder) -> None:
        self._flush()
        self.current = builder

    def _flush(self) -> None:
        if self.current is not None:
            built = self.current.build()
            if built is not None:
                self.files.append(built)
        self.current = None

    def _header(self, line: str) -> None:
        assert self.current is not None
        self.current.header.append(line)

    def _set_old(self, raw: str) -> None:
        assert self.current is not None
        self.current.old, self.current.saw_old = _header_path(raw), True

    def _set_new(self, raw: str) -> None:
        assert self.current is not None
        self.current.new, self.current.saw_new = _header_path(raw), True

    def _meta(self, line: str) -> None:
        current = self.current
        assert current is not None
        if line.startswith(("Binary files ", "GIT binary patch")):
            current.binary = True
        elif line.startswith("deleted file mode"):
            current.deleted = True
        elif line.startswith("rename to "):
            current.git_paths = (current.git_paths[0], _unquote(line[len("rename to ") :]))
        elif line.startswith("rename from "):
            current.git_paths = (_unquote(line[len("rename from ") :]), current.git_paths[1])
        current.header.append(line)

    def _hunk(self, at: int) -> int:
        assert self.current is not None
        header = self.lines[at]
        match = _HUNK.match(header)
        if match is None:
            raise PatchError(f"{self.source} line {at + 1}: malformed hunk header {header!r}")
        old_start, old_count, new_start, new_count = (
            int(g) if g is not None else 1 for g in match.groups()
        )
        body, at = self._body(at + 1, old_count, new_count)
        self.current.hunks.append(
            Hunk(old_start, old_count, new_start, new_count, header, tuple(body))
        )
        return at

    def _body(self, at: int, old_left: int, new_left: int) -> tuple[list[str], int]:
        body: list[str] = []
        while at < len(self.lines) and (old_left > 0 or new_left > 0 or _is_note(self.lines[at])):
            line = self.lines[at]
            kind = line[:1]
            if kind in (" ", ""):
                old_left, new_left = old_left - 1, new_left - 1
                line = line or " "  # some tools strip the space of an empty context line
            elif kind == "-":
                old_left -= 1
            elif kind == "+":
                new_left -= 1
            elif kind != "\\":
                break
            body.append(line)
            at += 1
        if old_left > 0 or new_left > 0 or old_left < 0 or new_left < 0:
            raise PatchError(
                f"{self.source} line {at + 1}: a hunk ends early or runs long (its @@ header "
                "counts other lines); give the diff as git or `diff -u` printed it"
            )
        return body, at


def _is_note(line: str) -> bool:
    return line.startswith("\\ ")


def _header_path(raw: str) -> str | None:
    """The path on a `---`/`+++` line: timestamps dropped, quotes undone, `a/`/`b/` removed."""
    text = raw.split("\t", 1)[0] if not raw.startswith('"') else raw
    path = _unquote(text.strip())
    if path == _DEV_NULL:
        return None
    return _strip_prefix(path)


def _git_header_paths(rest: str) -> tuple[str | None, str | None]:
    """Paths from `diff --git a/X b/Y`, used only when a file has no `---`/`+++` lines."""
    if rest.startswith('"'):
        end = _closing_quote(rest)
        old, new = rest[: end + 1], rest[end + 2 :]
    else:
        old, sep, new = rest.partition(" b/")
        new = f"b/{new}" if sep else ""
    return _strip_prefix(_unquote(old)) or None, _strip_prefix(_unquote(new)) or None


def _closing_quote(text: str) -> int:
    at = 1
    while at < len(text) and text[at] != '"':
        at += 2 if text[at] == "\\" else 1
    return at


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def _unquote(text: str) -> str:
    """Undo git's C-style quoting of a path (`"t\\303\\251st"` is `tést`)."""
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return text
    out = bytearray()
    inner = text[1:-1]
    at = 0
    while at < len(inner):
        char = inner[at]
        if char == "\\" and _OCTAL.fullmatch(inner[at : at + 4]):
            out.append(int(inner[at + 1 : at + 4], 8))
            at += 4
        elif char == "\\" and at + 1 < len(inner):
            out.extend(_ESCAPES.get(inner[at + 1], inner[at + 1]).encode())
            at += 2
        else:
            out.extend(char.encode())
            at += 1
    return out.decode("utf-8", errors="replace")
