"""What goes wrong with a review, drawn from corral's roots in `tools._errors`::

    InvalidInput
    └── ReviewInputError      the change cannot be read; nothing ran and nothing was written
        ├── BadRange          `--range` names a revision git cannot resolve
        ├── NotARepository    `--range` was given outside a git repository
        └── PatchError        `--patch` is missing, unreadable or not a unified diff
    OperationFailed
    └── GitFailed             git itself failed while the review ran (e.g. making a worktree)

A reviewer that fails its unit is not an error: the unit is reported as not reviewed.
"""

from __future__ import annotations

from corral.tools import InvalidInput, OperationFailed


class ReviewInputError(InvalidInput):
    """The change to review cannot be read; nothing was started."""


class BadRange(ReviewInputError):
    """The range names a revision that does not exist."""


class NotARepository(ReviewInputError):
    """A git range was asked for in a folder that is no git repository."""


class PatchError(ReviewInputError):
    """The patch file cannot be read or holds no unified diff."""


class GitFailed(OperationFailed):
    """A git command the review needs failed."""
