"""Batch refactoring: disjoint write sets, one worktree and branch per worker, one result branch.

`run_refactor` partitions the selected files (`partition`), gives each worker a git worktree
where it may write its own files only, judges each by running the check itself, and merges the
passing branches into a result branch; `RefactorOutcome.summary` is what the user reads. Bad
requests raise `RefactorInputError` subclasses before anything is made.
"""

from ...runs import DEFAULT_MAX_ATTEMPTS as DEFAULT_MAX_ATTEMPTS
from ...runs import DEFAULT_REFACTOR_CONCURRENCY as DEFAULT_CONCURRENCY
from ...runs import RefactorJob as RefactorJob
from ._check import CheckResult as CheckResult
from ._errors import BranchUnavailable as BranchUnavailable
from ._errors import CheckFailsAtHead as CheckFailsAtHead
from ._errors import GitFailed as GitFailed
from ._errors import NoFilesSelected as NoFilesSelected
from ._errors import NotARepository as NotARepository
from ._errors import RefactorInputError as RefactorInputError
from ._errors import UncommittedChanges as UncommittedChanges
from ._outcome import CHECK_FAILED as CHECK_FAILED
from ._outcome import CONFLICT as CONFLICT
from ._outcome import FAILED as FAILED
from ._outcome import MERGED as MERGED
from ._outcome import OUTSIDE as OUTSIDE
from ._outcome import UNCHANGED as UNCHANGED
from ._outcome import Attempt as Attempt
from ._outcome import RefactorOutcome as RefactorOutcome
from ._outcome import WorkerOutcome as WorkerOutcome
from ._partition import BALANCE_TOLERANCE as BALANCE_TOLERANCE
from ._partition import SelectedFile as SelectedFile
from ._partition import WriteSet as WriteSet
from ._partition import partition as partition
from ._pipeline import REFACTOR as REFACTOR
from ._pipeline import RefactorPlan as RefactorPlan
from ._pipeline import default_branch as default_branch
from ._pipeline import run_refactor as run_refactor
from ._pipeline import worker_branch as worker_branch
from ._task import RESULT_SCHEMA as RESULT_SCHEMA

__all__ = [
    "BALANCE_TOLERANCE",
    "CHECK_FAILED",
    "CONFLICT",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_ATTEMPTS",
    "FAILED",
    "MERGED",
    "OUTSIDE",
    "REFACTOR",
    "RESULT_SCHEMA",
    "UNCHANGED",
    "Attempt",
    "BranchUnavailable",
    "CheckFailsAtHead",
    "CheckResult",
    "GitFailed",
    "NoFilesSelected",
    "NotARepository",
    "RefactorInputError",
    "RefactorJob",
    "RefactorOutcome",
    "RefactorPlan",
    "SelectedFile",
    "UncommittedChanges",
    "WorkerOutcome",
    "WriteSet",
    "default_branch",
    "partition",
    "run_refactor",
    "worker_branch",
]
