"""Runs: how one is set up and opened, where it executes, and what it comes to.

`RunSetup` and `open_run` open a run's journal, lease and runtime for every run kind;
`run_single_agent` and `resume_single` carry out and carry on a run of one task; an `Executor`
(`LocalExecutor` here, or the Temporal one `executor_from_settings` builds) carries runs out.
"""

from ._executor import Executor as Executor
from ._executor import JobDispatch as JobDispatch
from ._executor import LocalExecutor as LocalExecutor
from ._executor import executor_from_settings as executor_from_settings
from ._executor import executor_of as executor_of
from ._executor import refuse_remote as refuse_remote
from ._jobs import DEFAULT_MAX_RESULT_TRIES as DEFAULT_MAX_RESULT_TRIES
from ._jobs import FANOUT_KINDS as FANOUT_KINDS
from ._jobs import ExecJob as ExecJob
from ._jobs import FanoutJob as FanoutJob
from ._jobs import FanoutKind as FanoutKind
from ._jobs import JobInputError as JobInputError
from ._jobs import WorkerTemplate as WorkerTemplate
from ._pipeline_jobs import DEFAULT_MAX_ATTEMPTS as DEFAULT_MAX_ATTEMPTS
from ._pipeline_jobs import DEFAULT_MAX_UNIT_LINES as DEFAULT_MAX_UNIT_LINES
from ._pipeline_jobs import DEFAULT_REFACTOR_CONCURRENCY as DEFAULT_REFACTOR_CONCURRENCY
from ._pipeline_jobs import SIMILARITY_FLOOR as SIMILARITY_FLOOR
from ._pipeline_jobs import Issue as Issue
from ._pipeline_jobs import Job as Job
from ._pipeline_jobs import Label as Label
from ._pipeline_jobs import LabelSet as LabelSet
from ._pipeline_jobs import RefactorJob as RefactorJob
from ._pipeline_jobs import ReviewJob as ReviewJob
from ._pipeline_jobs import TriageJob as TriageJob
from ._resume import NotResumable as NotResumable
from ._resume import UnknownTarget as UnknownTarget
from ._resume import journaled_spec as journaled_spec
from ._resume import resume_single as resume_single
from ._settings import EXECUTOR_KINDS as EXECUTOR_KINDS
from ._settings import INSTALL_HINT as INSTALL_HINT
from ._settings import ApprovalRefused as ApprovalRefused
from ._settings import ExecutorKind as ExecutorKind
from ._settings import ExecutorSettings as ExecutorSettings
from ._settings import ExecutorSettingsError as ExecutorSettingsError
from ._settings import NotOnThisExecutor as NotOnThisExecutor
from ._settings import UnknownRunApproval as UnknownRunApproval
from ._settings import check_address as check_address
from ._settings import resolve_executor_settings as resolve_executor_settings
from ._setup import JOURNAL_NAME as JOURNAL_NAME
from ._setup import RunSetup as RunSetup
from ._setup import StartCallback as StartCallback
from ._setup import build_root_spec as build_root_spec
from ._setup import journal_path as journal_path
from ._setup import new_id as new_id
from ._setup import open_run as open_run
from ._setup import open_run_memory as open_run_memory
from ._setup import profile_from_config as profile_from_config
from ._setup import with_skills as with_skills
from ._single import SingleOutcome as SingleOutcome
from ._single import run_single_agent as run_single_agent

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_RESULT_TRIES",
    "DEFAULT_MAX_UNIT_LINES",
    "DEFAULT_REFACTOR_CONCURRENCY",
    "EXECUTOR_KINDS",
    "FANOUT_KINDS",
    "INSTALL_HINT",
    "JOURNAL_NAME",
    "SIMILARITY_FLOOR",
    "ApprovalRefused",
    "ExecJob",
    "Executor",
    "ExecutorKind",
    "ExecutorSettings",
    "ExecutorSettingsError",
    "FanoutJob",
    "FanoutKind",
    "Issue",
    "Job",
    "JobDispatch",
    "JobInputError",
    "Label",
    "LabelSet",
    "LocalExecutor",
    "NotOnThisExecutor",
    "NotResumable",
    "RefactorJob",
    "ReviewJob",
    "RunSetup",
    "SingleOutcome",
    "StartCallback",
    "TriageJob",
    "UnknownRunApproval",
    "UnknownTarget",
    "WorkerTemplate",
    "build_root_spec",
    "check_address",
    "executor_from_settings",
    "executor_of",
    "journal_path",
    "journaled_spec",
    "new_id",
    "open_run",
    "open_run_memory",
    "profile_from_config",
    "refuse_remote",
    "resolve_executor_settings",
    "resume_single",
    "run_single_agent",
    "with_skills",
]
