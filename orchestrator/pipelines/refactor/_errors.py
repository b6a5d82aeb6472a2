"""What goes wrong with a refactor run, drawn from corral's roots in `tools._errors`::

    InvalidInput
    └── RefactorInputError      the request cannot run; nothing was started or left behind
        ├── NotARepository      --repo is not inside a git work tree with a commit
        ├── UncommittedChanges  tracked files differ from HEAD: workers would miss them
        ├── NoFilesSelected     --files matched no tracked regular file
        ├── BranchUnavailable   the result branch exists, clashes with a ref, or is malformed
        └── CheckFailsAtHead    --check already fails before any change
    OperationFailed
    └── GitFailed               a git command the pipeline ran failed; the message has its stderr

A worker whose check fails, whose merge conflicts or whose agent errs is not an error: it is
recorded on its outcome and shown in the summary.
"""

from __future__ import annotations

from corral.tools import InvalidInput, OperationFailed


class RefactorInputError(InvalidInput):
    """A refactor was asked for with unusable inputs; nothing was started."""


class NotARepository(RefactorInputError):
    """--repo is not a git work tree, or its HEAD has no commit."""


class UncommittedChanges(RefactorInputError):
    """The repository has changes to tracked files that HEAD does not hold."""


class NoFilesSelected(RefactorInputError):
    """No tracked regular file matches the --files patterns."""


class BranchUnavailable(RefactorInputError):
    """The result branch cannot be created as named."""


class CheckFailsAtHead(RefactorInputError):
    """The check fails on the unchanged HEAD, so no worker could make it pass."""


class GitFailed(OperationFailed):
    """A git command failed; the message names it and carries what it printed."""
