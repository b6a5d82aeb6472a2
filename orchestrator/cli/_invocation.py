"""How the person at the terminal calls corral again: the words to print in a "next step" line.

`corral` when that name finds this very program on PATH; otherwise the path it was started by
(`.venv/bin/corral` right after setup), so a printed suggestion works when pasted as it is.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path


def corral_invocation(argv0: str | None = None, path: str | None = None) -> str:
    """The command that runs this corral: `corral`, its full path, or `python -m corral`."""
    started = Path(argv0 if argv0 is not None else sys.argv[0])
    if started.name != "corral":
        return f"{shlex.quote(sys.executable)} -m corral"
    found = shutil.which("corral", path=path if path is not None else os.environ.get("PATH"))
    if found is not None and _same_file(Path(found), started):
        return "corral"
    return shlex.quote(str(started.absolute()))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False
