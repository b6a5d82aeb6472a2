"""Reading a file the user named on the command line or in a request (items, issues, labels).

Every such reader says the same things when it cannot: the file is missing, it is not UTF-8
text, it is larger than `MAX_INPUT_BYTES`, or the system refused it, each with the file's role
and path, raised as the caller's own error type so that each command keeps its exit code and
wording. The cap is read, not asked of the file system: a pipe (`--items <(jq ...)`) or a
device (`/dev/zero`) has no size to ask, and without it an endless one grew corral for ever.
"""

from __future__ import annotations

from pathlib import Path

from corral.tools import CorralError

MAX_INPUT_BYTES = 256 * 1024 * 1024
"""The largest input file read (256 MiB): far past any items or issues list a run takes."""


def read_input_file(
    path: Path, role: str, error: type[CorralError], *, limit: int = MAX_INPUT_BYTES
) -> str:
    """The text of the `role` file at `path` (a leading byte-order mark dropped)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise error(
                f"{role} file {path} is larger than {_size(limit)}; split it into smaller files"
            )
        return data.decode("utf-8-sig")
    except FileNotFoundError as exc:
        raise error(f"{role} file {path} does not exist") from exc
    except UnicodeDecodeError as exc:
        raise error(f"{role} file {path} is not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise error(f"cannot read {role} file {path}: {exc.strerror}") from exc


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit:,} bytes"
