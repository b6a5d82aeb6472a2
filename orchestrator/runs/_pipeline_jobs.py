"""The pipelines' jobs: a review, a refactor, a triage, as data checked when it is made.

Each pipeline (`orchestrator.pipelines.*`) takes its job; the commands and the service build
them. The inputs a triage reads from files (issues, labels) are parsed by the triage pipeline
into the plain records here, so a job holds only data (and is journaled as JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from ._jobs import DEFAULT_MAX_RESULT_TRIES, ExecJob, FanoutJob, JobInputError, _Job

DEFAULT_MAX_UNIT_LINES = 400
"""Changed lines a review unit holds before a file is split into several units."""
DEFAULT_REFACTOR_CONCURRENCY = 4
DEFAULT_MAX_ATTEMPTS = 2
"""Agents a refactor gives one write set while its check fails."""
SIMILARITY_FLOOR = 0.4
"""Cosine similarity under which an issue is no candidate duplicate. With WordLlama, unrelated
issues of one project score about 0.2-0.4 and restatements of one problem 0.5 and up."""


def _at_least_one(job: _Job, names: Sequence[str]) -> None:
    for name in names:
        value = getattr(job, name)
        if value is not None and value < 1:
            raise JobInputError(f"{name} must be at least 1, not {value}")


class ReviewJob(_Job):
    """`corral review`: `range` (`BASE..HEAD`) in the git repository at `repo`, or `patch` (a
    unified diff's file), reviewed by read-only agents, one per unit."""

    kind: Literal["review"] = "review"
    repo: Path
    range: str | None = None
    patch: Path | None = None
    concurrency: int | None = None
    max_unit_lines: int = DEFAULT_MAX_UNIT_LINES

    @model_validator(mode="after")
    def _counts_of_at_least_one(self) -> ReviewJob:
        _at_least_one(self, ("concurrency", "max_unit_lines"))
        return self


class RefactorJob(_Job):
    """`corral refactor`: `instruction` applied across `repo` by parallel workers, one per write
    set; `files` are git pathspecs relative to `repo` (none: all files)."""

    kind: Literal["refactor"] = "refactor"
    repo: Path
    instruction: str
    files: tuple[str, ...] = ()
    check: str | None = None
    branch: str | None = None
    concurrency: int = DEFAULT_REFACTOR_CONCURRENCY
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    worktrees_dir: Path | None = None
    """Where the run's temporary folder of worktrees goes (default: the system's temp folder)."""

    @model_validator(mode="after")
    def _counts_of_at_least_one(self) -> RefactorJob:
        _at_least_one(self, ("concurrency", "max_attempts"))
        return self


@dataclass(frozen=True)
class Issue:
    """One issue, and where it came from (`position`, e.g. "index 3, line 41") for messages."""

    number: int
    title: str
    body: str = ""
    labels: tuple[str, ...] = ()
    author: str = ""
    created_at: str = ""
    position: str = ""


@dataclass(frozen=True)
class Label:
    name: str
    description: str
    line: int


@dataclass(frozen=True)
class LabelSet:
    """The labels in file order; `names` is what the result schema's enum holds."""

    labels: tuple[Label, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(label.name for label in self.labels)

    def __contains__(self, name: object) -> bool:
        return name in self.names


class TriageJob(_Job):
    """`corral triage`: `issues` against `labels`, its workers in `cwd`; with `out`, where
    `triage.json` and `triage.md` go. Workers run read-only with `tools` (none by default: the
    issue is in the task; give `READ_ONLY_TOOLS` to let them look at the code in `cwd`)."""

    kind: Literal["triage"] = "triage"
    issues: tuple[Issue, ...]
    labels: LabelSet
    cwd: Path
    out: Path | None = None
    concurrency: int | None = None
    similarity_floor: float = SIMILARITY_FLOOR
    tools: tuple[str, ...] = ()
    max_result_tries: int = DEFAULT_MAX_RESULT_TRIES

    @model_validator(mode="after")
    def _counts_of_at_least_one(self) -> TriageJob:
        _at_least_one(self, ("concurrency", "max_result_tries"))
        return self


Job = Annotated[
    ExecJob | FanoutJob | ReviewJob | RefactorJob | TriageJob, Field(discriminator="kind")
]
"""Every job a run carries out, told apart by `kind`."""
