"""Errors of `apply_patch`: what went wrong with a patch, and whether anything was written.

Every error before the write phase leaves the tree untouched; only `PatchWriteFailed` happens
while writing, and it says whether the files already written could be restored::

    InvalidInput (tools._errors)
    └── PatchError              the patch cannot be applied as written; nothing was changed
        ├── PatchParseError     `invalid patch: …` or `invalid hunk at line N, …`
        └── PatchConflict       a file is missing or a directory, or its lines do not match
    OperationFailed (tools._errors)
    └── PatchWriteFailed        the disk refused a write midway; earlier writes were undone
"""

from __future__ import annotations

from .._errors import InvalidInput, OperationFailed


class PatchError(InvalidInput):
    """The patch cannot be applied as written; no file was changed."""


class PatchParseError(PatchError):
    """The patch text does not follow the patch format."""

    @classmethod
    def patch(cls, message: str) -> PatchParseError:
        return cls(f"invalid patch: {message}")

    @classmethod
    def hunk(cls, line_number: int, message: str) -> PatchParseError:
        return cls(f"invalid hunk at line {line_number}, {message}")


class PatchConflict(PatchError):
    """The patch does not fit the files on disk (missing file, directory, unmatched lines)."""


class PatchWriteFailed(OperationFailed):
    """Writing the patched files failed partway; the message says what was restored."""
