"""Where a command's `--out` goes, checked before any work starts; `-` for an input file.

A run that ends by writing its results somewhere it cannot (a folder where a file was meant, a
file where a folder was meant, a parent that cannot be made) used to spend its whole budget and
then stop on a traceback. These checks refuse such a path up front, in one line; the writers keep
their own handling for what changes while the run goes.
"""

from __future__ import annotations

import os
from pathlib import Path

STDOUT = "-"
STDIN = Path("/dev/stdin")


def input_path(raw: Path) -> Path:
    """An input file flag's path, `-` meaning standard input (as `--out -` means stdout)."""
    return STDIN if str(raw) == "-" else raw


def check_out_file(raw: str | Path, flag: str = "--out", example: str = "results.jsonl") -> None:
    """Refuse `raw` as an output file unless it can be created or replaced (`-` is stdout)."""
    from corral.tools import InvalidInput

    if str(raw) == STDOUT:
        return
    path = Path(raw).expanduser()
    if path.is_dir():
        raise InvalidInput(
            f"{flag} {path}: is a folder; name a file in it, e.g. {flag} {path / example}"
        )
    _check_creatable(path.parent, f"{flag} {path}")


def check_out_dir(raw: Path, flag: str = "--out") -> None:
    """Refuse `raw` as an output folder unless it is one or can be made."""
    from corral.tools import InvalidInput

    path = raw.expanduser()
    if path.exists() and not path.is_dir():
        raise InvalidInput(f"{flag} {path}: is a file, not a folder; name a folder for the reports")
    _check_creatable(path, f"{flag} {path}")


def _check_creatable(folder: Path, what: str) -> None:
    """`folder` exists as a folder we may write in, or its nearest existing ancestor is one."""
    from corral.tools import InvalidInput

    existing = folder.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InvalidInput(f"{what}: {existing} is a file, not a folder; choose another path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InvalidInput(f"{what}: cannot write in {existing}; choose a folder you can write to")
