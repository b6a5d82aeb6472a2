"""Reading a fan-out's items from a file the MCP client names: only under the server's folder.

A client names `items_file` relative to the server's working folder (an absolute path is taken
only if it lies there too). The path is resolved (`..` and every symlink followed) and must stay
inside that folder and the `[service]` allowed roots, and outside corral's home; the file is
then opened component by component without following a symlink (`corral.tools._safe_fs`), so
a link swapped in after the check cannot redirect the read. Only a regular file of at most
`MAX_ITEMS_BYTES` is read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from corral.tools import is_within
from corral.tools._safe_fs import open_regular

from ..fanout import ItemsFileError, parse_items
from ._errors import ItemsFileRefused

MAX_ITEMS_BYTES: Final = 16 << 20
"""The largest items file read (16 MiB): a client cannot make the server hold more."""


def read_items_file(
    name: str, *, workdir: Path, home: Path, roots: Sequence[Path]
) -> list[dict[str, Any]]:
    """The items (JSON Lines objects) of `name` under `workdir`; `ItemsFileRefused` if the
    path leaves `workdir` or the allowed `roots`, lies in corral's `home`, or is not a readable
    items file."""
    path = _checked_path(name, workdir, home)
    if not is_within(path, roots):  # a server in `/` or `~` has none: it reads no file
        raise ItemsFileRefused(
            f"items_file {name!r} is not in [service] allowed_roots; set allowed_roots, or "
            "pass the items inline"
        )
    try:
        with open_regular(path) as handle:
            data = handle.read(MAX_ITEMS_BYTES + 1)
    except FileNotFoundError:
        raise ItemsFileRefused(f"items_file {name!r} does not exist in {workdir}") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ItemsFileRefused(f"items_file {name!r} cannot be read: {reason}") from None
    if len(data) > MAX_ITEMS_BYTES:
        raise ItemsFileRefused(
            f"items_file {name!r} is over {MAX_ITEMS_BYTES} bytes; split it into several runs"
        )
    try:
        text = data.decode("utf-8")
        return [item.data for item in parse_items(text, source=f"items_file {name}")]
    except UnicodeDecodeError as exc:
        raise ItemsFileRefused(f"items_file {name!r} is not UTF-8 text ({exc.reason})") from None
    except ItemsFileError as exc:
        raise ItemsFileRefused(str(exc)) from None


def _checked_path(name: str, workdir: Path, home: Path) -> Path:
    if not name or "\x00" in name:
        raise ItemsFileRefused("items_file must be a non-empty path without NUL characters")
    candidate = Path(name)
    if not candidate.is_absolute():
        candidate = workdir / candidate
    try:
        resolved = Path(os.path.realpath(candidate, strict=False))
    except (OSError, ValueError, RuntimeError) as exc:
        raise ItemsFileRefused(f"items_file {name!r} is not a usable path: {exc}") from None
    # Checked on the resolved path: `..`, absolute paths and symlinks all end up here.
    if is_within(resolved, [home]):
        raise ItemsFileRefused(
            f"items_file {name!r} is inside corral's home {home}, which no client may read"
        )
    if not is_within(resolved, [workdir]):
        raise ItemsFileRefused(
            f"items_file {name!r} is outside the server's working folder {workdir}; name a file "
            "in that folder (relative paths are taken from there), or pass the items inline"
        )
    return resolved
