"""Splitting the selected files into disjoint write sets, balanced by size, folders kept together.

Files are grouped by the folder they sit in; there are `min(concurrency, folders)` sets. The
groups are packed largest first, each into the lightest set. A folder is split (its files, in
path order, cut in two halves by size) only when the packing leaves the heaviest set more than
`BALANCE_TOLERANCE` times above an even share (or above the largest single file, which no split
can shrink), and then only a folder of that heaviest set. Pure: no I/O, same input, same sets.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

BALANCE_TOLERANCE = 1.25
"""How far above an even share the heaviest set may be before a folder is split."""


@dataclass(frozen=True, order=True)
class SelectedFile:
    """A tracked file to refactor: its path from the repository's top, and its size in bytes."""

    path: str
    size: int


@dataclass(frozen=True)
class WriteSet:
    """The files one worker may change (sorted), numbered from 1."""

    index: int
    files: tuple[str, ...]
    size: int

    @property
    def folders(self) -> tuple[str, ...]:
        """The folders its files sit in ("" for the repository's top), sorted."""
        return tuple(sorted({posixpath.dirname(path) for path in self.files}))


@dataclass(frozen=True)
class _Group:
    files: tuple[SelectedFile, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def first(self) -> str:
        return self.files[0].path


@dataclass
class _Bin:
    number: int
    groups: list[_Group] = field(default_factory=list)
    load: int = 0

    def add(self, group: _Group) -> None:
        self.groups.append(group)
        self.load += group.size


def partition(files: Sequence[SelectedFile], concurrency: int) -> list[WriteSet]:
    """Disjoint write sets covering `files` (no path twice), numbered in path order."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    unique = sorted({f.path: f for f in files}.values())
    if not unique:
        return []
    groups = _by_folder(unique)
    count = min(concurrency, len(groups))
    bound = max(sum(f.size for f in unique) / count, max(f.size for f in unique))
    while True:
        bins = _pack(groups, count)
        heaviest = max(bins, key=lambda b: (b.load, -b.number))
        splittable = [g for g in heaviest.groups if len(g.files) > 1]
        if heaviest.load <= BALANCE_TOLERANCE * bound or not splittable:
            return _numbered(bins)
        widest = max(splittable, key=lambda g: (g.size, len(g.files)))
        groups = [g for g in groups if g is not widest] + list(_halves(widest))


def _by_folder(files: Iterable[SelectedFile]) -> list[_Group]:
    folders: dict[str, list[SelectedFile]] = {}
    for f in files:
        folders.setdefault(posixpath.dirname(f.path), []).append(f)
    return [_Group(tuple(members)) for _, members in sorted(folders.items())]


def _pack(groups: Sequence[_Group], count: int) -> list[_Bin]:
    """Largest group first into the lightest bin (fewest groups, then lowest number, on ties)."""
    bins = [_Bin(number) for number in range(count)]
    for group in sorted(groups, key=lambda g: (-g.size, g.first)):
        lightest = min(bins, key=lambda b: (b.load, len(b.groups), b.number))
        lightest.add(group)
    return bins


def _halves(group: _Group) -> tuple[_Group, _Group]:
    """The group's files cut where the running size first reaches half; neither half empty."""
    half = group.size / 2
    running = 0
    cut = 1
    while cut < len(group.files) - 1:
        running += group.files[cut - 1].size
        if running >= half:
            break
        cut += 1
    return _Group(group.files[:cut]), _Group(group.files[cut:])


def _numbered(bins: Sequence[_Bin]) -> list[WriteSet]:
    filled = [
        (tuple(sorted(f.path for g in b.groups for f in g.files)), b.load) for b in bins if b.groups
    ]
    return [
        WriteSet(index=n, files=paths, size=load)
        for n, (paths, load) in enumerate(sorted(filled), start=1)
    ]
