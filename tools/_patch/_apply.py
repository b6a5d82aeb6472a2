"""Applying an update hunk's chunks to one file's text, in memory.

Owns line endings (a CRLF file stays CRLF whatever the patch used), a leading byte-order mark,
and the trailing newline every patched file ends with. Which file, and whether it may be
written, is decided by `_plan`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._errors import PatchConflict
from ._parse import UpdateChunk
from ._seek import seek_sequence

_BOM = "\ufeff"
_NOTHING_CHANGED = "No file was changed; re-read the file and write the patch against it."


@dataclass(frozen=True)
class _Replacement:
    start: int
    length: int
    lines: tuple[str, ...]


def apply_chunks(text: str, chunks: Sequence[UpdateChunk], display: str) -> str:
    """The new text of `display` after `chunks`; `PatchConflict` if a chunk does not match."""
    bom = _BOM if text.startswith(_BOM) else ""
    text = text.removeprefix(_BOM)
    newline = "\r\n" if _is_crlf(text) else "\n"
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if newline == "\r\n":
        lines = [line.removesuffix("\r") for line in lines]
    # Bottom-up keeps earlier indices valid; at equal starts the later chunk goes first so
    # that the earlier chunk's lines end up above it.
    ordered = sorted(_replacements(lines, chunks, display), key=lambda r: r.start)
    for repl in reversed(ordered):
        lines[repl.start : repl.start + repl.length] = repl.lines
    return bom + newline.join([*lines, ""])


def _is_crlf(text: str) -> bool:
    """Whether every line break is CRLF (mixed files keep their bytes, edited as LF)."""
    breaks = text.count("\n")
    return breaks > 0 and text.count("\r\n") == breaks


def _replacements(
    lines: list[str], chunks: Sequence[UpdateChunk], display: str
) -> list[_Replacement]:
    found: list[_Replacement] = []
    cursor = 0
    for number, chunk in enumerate(chunks, start=1):
        for context in chunk.contexts:
            at = seek_sequence(lines, [context], cursor)
            if at is None:
                raise PatchConflict(
                    f"failed to find the context line in {display} (chunk {number}, patch line "
                    f"{chunk.line_number}):\n{context}\n{_NOTHING_CHANGED}"
                )
            cursor = at + 1
        repl = _locate(lines, chunk, cursor, display, number)
        found.append(repl)
        cursor = repl.start + repl.length
    return found


def _locate(
    lines: list[str], chunk: UpdateChunk, cursor: int, display: str, number: int
) -> _Replacement:
    old = chunk.old_lines
    if not old:
        # A pure addition goes right after its context header, or at the end of the file.
        at = cursor if chunk.contexts else len(lines)
        return _Replacement(at, 0, chunk.new_lines)
    found = seek_sequence(lines, old, cursor, end_of_file=chunk.end_of_file)
    if found is None and old[-1] == "":
        # A blank line at the end of a chunk is often just the patch's own spacing.
        old = old[:-1]
        found = seek_sequence(lines, old, cursor, end_of_file=chunk.end_of_file)
    if found is None:
        expected = "\n".join(chunk.old_lines)
        raise PatchConflict(
            f"failed to find the expected lines in {display} (chunk {number}, patch line "
            f"{chunk.line_number}):\n{expected}\n{_NOTHING_CHANGED}"
        )
    matched = lines[found : found + len(old)]
    return _Replacement(found, len(old), _new_lines(chunk, matched))


def _new_lines(chunk: UpdateChunk, matched: list[str]) -> tuple[str, ...]:
    """The chunk's new lines, with context lines taken from the file as it is.

    A loosely matched context line (other spacing, typographic quotes) is left exactly as the
    file has it; context past the matched span (a dropped trailing blank) is left out.
    """
    new: list[str] = []
    k = 0
    for sign, text in chunk.lines:
        if sign == "+":
            new.append(text)
            continue
        if sign == " " and k < len(matched):
            new.append(matched[k])
        k += 1
    return tuple(new)
