"""Cutting a change into review units, and the map of which new-file lines the change touches.

A unit is one file, or for a large file one run of consecutive hunks holding at most
`max_changed_lines` added plus removed lines (a single larger hunk is a unit of its own: a hunk
is never cut). `ChangeMap` answers whether a finding's lines lie in the change, which is what
aggregation keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...runs import DEFAULT_MAX_UNIT_LINES
from ._diff import FileDiff, Hunk

CONTEXT_TOLERANCE = 3
"""A finding may start or end this many lines away from a changed line and still be kept: the
`-U3` context a reviewer sees around every change, where a defect the change exposes often sits."""


@dataclass(frozen=True)
class ReviewUnit:
    """What one reviewer gets: part `part` of `parts` of the change to `path`."""

    index: int
    file: FileDiff
    hunks: tuple[Hunk, ...]
    part: int = 1
    parts: int = 1

    @property
    def path(self) -> str:
        return self.file.path

    @property
    def label(self) -> str:
        return self.path if self.parts == 1 else f"{self.path} (part {self.part} of {self.parts})"

    @property
    def diff(self) -> str:
        return self.file.render(self.hunks)

    def changed_ranges(self) -> str:
        """The lines this unit adds or changes, as `3-5, 9` (or a note for removals only)."""
        lines = sorted({n for h in self.hunks for n in h.added})
        return _ranges(lines) if lines else "none (lines were only removed)"

    def item(self, where: str) -> dict[str, Any]:
        """The fan-out item: the fields the reviewer's task template uses."""
        diff = self.diff
        return {
            "path": self.path,
            "label": self.label,
            "changed": self.changed_ranges(),
            "where": where,
            "diff": diff,
            "fence": fence_for(diff),
        }


def split_units(
    files: Iterable[FileDiff], max_changed_lines: int = DEFAULT_MAX_UNIT_LINES
) -> list[ReviewUnit]:
    """One unit per reviewable file, or per group of its hunks when it changes many lines."""
    units: list[ReviewUnit] = []
    for file in files:
        if file.skip_reason is not None:
            continue
        groups = _group_hunks(file.hunks, max_changed_lines)
        for part, hunks in enumerate(groups, start=1):
            units.append(ReviewUnit(len(units), file, hunks, part, len(groups)))
    return units


def _group_hunks(hunks: Sequence[Hunk], limit: int) -> list[tuple[Hunk, ...]]:
    groups: list[tuple[Hunk, ...]] = []
    current: list[Hunk] = []
    size = 0
    for hunk in hunks:
        if current and size + hunk.changed_count > limit:
            groups.append(tuple(current))
            current, size = [], 0
        current.append(hunk)
        size += hunk.changed_count
    if current:
        groups.append(tuple(current))
    return groups


class ChangeMap:
    """For each changed file, the new-file lines the change touches, and the text it shows."""

    def __init__(self, files: Iterable[FileDiff], tolerance: int = CONTEXT_TOLERANCE) -> None:
        self.tolerance = tolerance
        self._anchors: dict[str, tuple[int, ...]] = {}
        self._text: dict[str, dict[int, str]] = {}
        for file in files:
            if file.skip_reason is not None:
                continue
            self._anchors[file.path] = tuple(sorted({n for h in file.hunks for n in h.anchors}))
            self._text[file.path] = {n: t for h in file.hunks for n, t in h.new_text().items()}

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(self._anchors)

    def covers(self, path: str, start: int, end: int) -> bool:
        """Whether lines `start`-`end` of `path` come within the tolerance of a changed line."""
        low, high = start - self.tolerance, end + self.tolerance
        return any(low <= anchor <= high for anchor in self._anchors.get(path, ()))

    def line_text(self, path: str, line: int) -> str | None:
        """The new text of `line` of `path` if the diff shows it."""
        return self._text.get(path, {}).get(line)


def _ranges(lines: Sequence[int]) -> str:
    spans: list[str] = []
    start = prev = lines[0]
    for number in [*lines[1:], None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        if number is not None:
            start = prev = number
    return ", ".join(spans)


def fence_for(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)
