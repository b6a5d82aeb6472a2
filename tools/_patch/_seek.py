"""Finding a chunk's lines in a file, in four passes of decreasing strictness.

Models copy context lines imperfectly: trailing spaces go missing, indentation drifts, and
typographic dashes or quotes come back as ASCII. Each pass forgives a little more: exact,
right-trimmed, fully trimmed, then common Unicode punctuation folded to ASCII.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

# Look-alikes that editors and models swap for their ASCII forms.
_ASCII_LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\uff07", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\uff02", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
        "\u2026": "...",
    }
)


def _normalise(line: str) -> str:
    return line.strip().translate(_ASCII_LOOKALIKES)


_PASSES: tuple[Callable[[str], str], ...] = (
    lambda line: line,
    str.rstrip,
    str.strip,
    _normalise,
)


def seek_sequence(
    lines: Sequence[str], pattern: Sequence[str], start: int, *, end_of_file: bool = False
) -> int | None:
    """Index at or after `start` where `pattern` occurs in `lines`, or None.

    With `end_of_file` the pattern is first tried flush against the end of the file, then
    anywhere after `start` as usual.
    """
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    last = len(lines) - len(pattern)
    if end_of_file:
        found = _first_match(lines, pattern, range(last, last + 1))
        if found is not None:
            return found
    return _first_match(lines, pattern, range(start, last + 1))


def _first_match(lines: Sequence[str], pattern: Sequence[str], starts: range) -> int | None:
    for fold in _PASSES:
        folded = [fold(p) for p in pattern]
        for i in starts:
            if all(fold(lines[i + k]) == folded[k] for k in range(len(folded))):
                return i
    return None
