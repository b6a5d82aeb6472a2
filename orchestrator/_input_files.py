"""Reading a file the user named on the command line or in a request (items, issues, labels).

Every such reader says the same three things when it cannot: the file is missing, it is not
UTF-8 text, or the system refused it, each with the file's role and path, raised as the
caller's own error type so that each command keeps its exit code and wording.
"""

from __future__ import annotations

from pathlib import Path

from corral.tools import CorralError


def read_input_file(path: Path, role: str, error: type[CorralError]) -> str:
    """The text of the `role` file at `path` (a leading byte-order mark dropped)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise error(f"{role} file {path} does not exist") from exc
    except UnicodeDecodeError as exc:
        raise error(f"{role} file {path} is not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise error(f"cannot read {role} file {path}: {exc.strerror}") from exc
