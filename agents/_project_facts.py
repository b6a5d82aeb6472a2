"""What AGENTS.md conditions test about a project: its languages, its files, its environment.

Languages come from marker files (`pyproject.toml`, `go.mod`, ...) named in the folders from
the project root down to the working folder: names only, one bounded listing per folder, no
deeper walk. `exists` looks a path up inside the project root only, following symlinks by
reading them, so neither `..`, an absolute path nor a symlink ever makes it touch a path outside.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from functools import cached_property
from itertools import islice
from pathlib import Path, PurePosixPath

from corral.tools import _safe_fs as safe_fs

MAX_LISTED = 2_000
"""Entries read from one folder when looking for marker files: a folder of a million files
costs no more than this."""
MAX_SYMLINK_HOPS = 40

MARKER_FILES: dict[str, tuple[str, ...]] = {
    "pyproject.toml": ("python",),
    "setup.py": ("python",),
    "setup.cfg": ("python",),
    "requirements.txt": ("python",),
    "Pipfile": ("python",),
    "package.json": ("javascript",),
    "tsconfig.json": ("typescript",),
    "deno.json": ("typescript",),
    "go.mod": ("go",),
    "Cargo.toml": ("rust",),
    "pom.xml": ("java",),
    "build.gradle": ("java",),
    "build.gradle.kts": ("kotlin",),
    "Gemfile": ("ruby",),
    "composer.json": ("php",),
    "Package.swift": ("swift",),
    "mix.exs": ("elixir",),
    "build.sbt": ("scala",),
    "pubspec.yaml": ("dart",),
    "stack.yaml": ("haskell",),
    "CMakeLists.txt": ("c", "cpp"),
}
MARKER_SUFFIXES: dict[str, str] = {
    ".csproj": "csharp",
    ".sln": "csharp",
    ".fsproj": "fsharp",
    ".gemspec": "ruby",
    ".cabal": "haskell",
    ".tf": "terraform",
}
ALIASES = {
    "py": "python",
    "js": "javascript",
    "node": "javascript",
    "ts": "typescript",
    "golang": "go",
    "rs": "rust",
    "c++": "cpp",
    "c#": "csharp",
    "kt": "kotlin",
    "rb": "ruby",
}
KNOWN_LANGUAGES = frozenset(
    {lang for langs in MARKER_FILES.values() for lang in langs} | set(MARKER_SUFFIXES.values())
)

Warn = Callable[[str], None]


class ProjectFacts:
    """The project as conditions see it; languages are detected on first use only."""

    def __init__(
        self,
        root: Path,
        *,
        folders: Sequence[Path] = (),
        environment: str | None = None,
        hidden: Sequence[Path] = (),
    ) -> None:
        """`root` is the real path of the project root; `folders` are listed for markers
        (default: the root alone); `hidden` (real paths: corral's home) is never probed, even
        inside the root."""
        self.root = root
        self.folders = tuple(folders) or (root,)
        self.environment = environment
        self.hidden = tuple(hidden)

    @cached_property
    def languages(self) -> frozenset[str]:
        return frozenset(lang for folder in self.folders for lang in _languages_in(folder))

    def has_language(self, name: str, warn: Warn) -> bool:
        language = ALIASES.get(name.lower(), name.lower())
        if language not in KNOWN_LANGUAGES:
            known = ", ".join(sorted(KNOWN_LANGUAGES))
            warn(f"unknown language {name!r} is never detected; known: {known}")
        return language in self.languages

    def exists(self, relative: str, warn: Warn) -> bool | None:
        """Whether `relative` names something inside the root; None (and a warning) for a
        path that leads outside it, which is not looked up."""
        found = confined_exists(self.root, relative, hidden=self.hidden)
        if found is None:
            shown = repr(relative[:60] + ("..." if len(relative) > 60 else ""))
            warn(
                f"exists={shown} leads outside the project root {self.root} or into corral's "
                "home; not looked up"
            )
        return found


def confined_exists(root: Path, relative: str, *, hidden: Sequence[Path] = ()) -> bool | None:
    """Whether `relative` exists under `root` (a real path), or None if it would leave it or
    enter one of the `hidden` folders.

    Walks one name at a time with `lstat`; a symlink is read, not followed, and its target
    must stay under `root`, so no path outside `root` is ever stat'ed. Each look-up reaches
    its name through folder handles without following a symlink, so a folder swapped for one
    between two steps is refused rather than followed.
    """
    if "\0" in relative or PurePosixPath(relative).is_absolute() or relative.startswith("~"):
        return None
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if ".." in parts:
        return None
    current, hops = root, 0
    while parts:
        candidate = current / parts.pop(0)
        if any(candidate == h or candidate.is_relative_to(h) for h in hidden):
            return None
        try:
            found = safe_fs.lstat(candidate)
        except OSError:
            # A folder checked a moment ago is a symlink now (swapped in since): not followed.
            return None
        if found is None:
            return False
        if not stat.S_ISLNK(found.st_mode):
            current = candidate
            continue
        hops += 1
        target = _link_target(candidate, current, root)
        if target is None or hops > MAX_SYMLINK_HOPS:
            return None if target is None else False
        parts = [*target.relative_to(root).parts, *parts]
        current = root
    return True


def _link_target(link: Path, folder: Path, root: Path) -> Path | None:
    """Where `link` (in the real folder `folder`) points, normalised, if that is under
    `root`; `folder` holds no symlinks, so `..` can be resolved by the text alone."""
    try:
        target = safe_fs.read_link(link)
    except OSError:
        return None
    joined = Path(os.path.normpath(os.path.join(folder, target)))
    return joined if joined == root or joined.is_relative_to(root) else None


def _languages_in(folder: Path) -> set[str]:
    found: set[str] = set()
    try:
        with os.scandir(folder) as entries:
            for entry in islice(entries, MAX_LISTED):
                found.update(MARKER_FILES.get(entry.name, ()))
                suffix = os.path.splitext(entry.name)[1]
                if suffix in MARKER_SUFFIXES:
                    found.add(MARKER_SUFFIXES[suffix])
    except OSError:
        pass  # an unreadable folder has no markers we can see
    return found
