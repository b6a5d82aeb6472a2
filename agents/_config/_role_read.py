"""Reading one role file: a regular file of at most `ROLE_FILE_MAX_BYTES`, UTF-8, optionally
confined to a folder (and kept out of `$CORRAL_HOME`), opened without following a symlink swapped
in after its path was resolved."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from corral.tools._safe_fs import open_regular

from ._errors import ConfigError

ROLE_FILE_MAX_BYTES = 32 * 1024
"""As `project_doc_max_bytes` by default: a role's file is read like an AGENTS.md."""


def read_role_file(
    path: Path, *, confine: tuple[Path, Path | None] | None, given: str, what: str = "Markdown"
) -> str:
    """The file's text; `ConfigError` (starting with `given`) when it may not or cannot be read.
    `confine` is (a folder, and optionally `$CORRAL_HOME`): inside the one, outside the other,
    and not a hard link (which could be any file's content under an inside name)."""
    real = path.resolve()
    if confine is not None and (
        not real.is_relative_to(confine[0].resolve())
        or (confine[1] is not None and real.is_relative_to(confine[1].resolve()))
    ):
        raise ConfigError(
            f"{given}: it leads outside {confine[0]}; keep the project's role files in it"
        )
    data = _read_checked(real, given, what, single_link=confine is not None)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{given}: not UTF-8 text; save it as UTF-8") from None


def _read_checked(real: Path, given: str, what: str, *, single_link: bool) -> bytes:
    """The bytes of the regular file at the resolved path `real`, reached without following a
    symlink swapped in since it was resolved (`open_regular`), at most the cap."""
    try:
        handle = open_regular(real)
    except FileNotFoundError:
        raise ConfigError(f"{given}: no such file; create it or fix the path") from None
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise ConfigError(f"{given}: not a regular file; point it at a {what} file") from None
        raise ConfigError(f"{given}: cannot be read: {exc.strerror}") from None
    with handle:
        if single_link and os.fstat(handle.fileno()).st_nlink > 1:
            raise ConfigError(f"{given}: a hard-linked file; copy the text into a file of its own")
        data = handle.read(ROLE_FILE_MAX_BYTES + 1)
    if len(data) > ROLE_FILE_MAX_BYTES:
        raise ConfigError(f"{given}: the file is over {ROLE_FILE_MAX_BYTES:,} bytes; shorten it")
    return data
