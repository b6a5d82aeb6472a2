"""The API's wire formats: run requests (validated by pydantic) and what a submission returns.

A request's fields mirror the CLI command's long options with `-` turned into `_`; files are
replaced by inline values (`items` a list of objects, `schema` an object, `template` a string,
`patch` the diff's text, `issues` and `labels` their JSON), and options that only choose report
files (`--out`, `--format`) are dropped: a pipeline's report is kept in the journal instead.
Inline inputs are checked by the pipelines' own parsers, so a bad one is a 422 naming it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    TypeAdapter,
    ValidationInfo,
    field_validator,
    model_validator,
)

from corral.agents import ROLE_NAME, ROLES
from corral.tools import InvalidInput

from ..pipelines.review import Severity
from ..runs import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_RESULT_TRIES,
    DEFAULT_MAX_UNIT_LINES,
    DEFAULT_REFACTOR_CONCURRENCY,
)
from ._inline import InlineLabels, check_patch, inline_issues, inline_labels
from ._urls import normalise_base_url

_T = TypeVar("_T")
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class _RunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    model: str | None = None
    base_url: str | None = None
    api: Literal["responses", "chat"] | None = None
    cd: str | None = None
    sandbox: Literal["read-only", "workspace-write", "full-access"] | None = None
    config: list[str] = Field(default_factory=list, description="`-c KEY=VALUE` overrides")
    run_id: str | None = Field(default=None, pattern=RUN_ID_PATTERN)

    @field_validator("base_url")
    @classmethod
    def _an_http_endpoint(cls, base_url: str | None) -> str | None:
        # One spelling per endpoint, so the allow-list and the run see the same address.
        return None if base_url is None else normalise_base_url(base_url)


class ExecRequest(_RunRequest):
    """`corral exec`: one agent on a task."""

    kind: Literal["exec"]
    task: str = Field(min_length=1)
    role: str = "general"

    @field_validator("role")
    @classmethod
    def _known_role(cls, role: str) -> str:
        # The config's own roles are known once the run's config is (`RunManager._resolve`).
        if role not in ROLES and not ROLE_NAME.fullmatch(role):
            raise ValueError(
                f"unknown role {role[:60]!r}; choose one of {', '.join(ROLES)} or a role of "
                "the server's config ([agents.roles.NAME])"
            )
        return role


class FanoutRequest(_RunRequest):
    """`corral fanout`: one worker per item, each reporting a schema-checked result."""

    kind: Literal["fanout"]
    items: list[dict[str, Any]] = Field(min_length=1)
    template: str = Field(min_length=1)
    result_schema: dict[str, Any] = Field(alias="schema")
    concurrency: PositiveInt | None = None
    max_result_tries: PositiveInt = DEFAULT_MAX_RESULT_TRIES


class ReviewRequest(_RunRequest):
    """`corral review`: a git range or a patch, reviewed by parallel read-only agents.

    The report (SARIF 2.1.0 and Markdown) is kept in the journal: `GET /v1/runs/{id}/report`.
    """

    kind: Literal["review"]
    repo: str | None = Field(default=None, description="the repository on the server (default: cd)")
    range: str | None = Field(default=None, description="BASE..HEAD or BASE...HEAD")
    patch: str | None = Field(default=None, description="a unified diff's text, instead of range")
    concurrency: PositiveInt | None = None
    fail_on: Literal["critical", "high", "medium", "low", "info", "none"] = Severity.HIGH.value
    max_unit_lines: PositiveInt = DEFAULT_MAX_UNIT_LINES

    @field_validator("patch")
    @classmethod
    def _a_unified_diff(cls, patch: str | None) -> str | None:
        if patch is not None:
            _checked(check_patch, patch)
        return patch

    @model_validator(mode="after")
    def _one_change(self) -> ReviewRequest:
        if (self.range is None) == (self.patch is None):
            raise ValueError("give exactly one of range (BASE..HEAD) and patch (a unified diff)")
        return self


_BLANK = {
    "instruction": "the instruction is blank; say what to change",
    "check": "check is blank; give a command that must pass, or leave check out",
}


class RefactorRequest(_RunRequest):
    """`corral refactor`: one instruction applied across a repository by parallel workers."""

    kind: Literal["refactor"]
    repo: str = Field(min_length=1, description="the git repository on the server")
    instruction: str = Field(min_length=1, description="what to change (the text)")
    files: list[str] = Field(default_factory=list, description="git pathspecs (default: all)")
    check: str | None = Field(default=None, min_length=1)
    branch: str | None = Field(default=None, min_length=1)
    concurrency: PositiveInt = DEFAULT_REFACTOR_CONCURRENCY
    max_attempts: PositiveInt = DEFAULT_MAX_ATTEMPTS

    @field_validator("instruction", "check")
    @classmethod
    def _not_blank(cls, text: str | None, info: ValidationInfo) -> str | None:
        if text is not None and not text.strip():
            raise ValueError(_BLANK[str(info.field_name)])
        return text


class TriageRequest(_RunRequest):
    """`corral triage`: labels, a type, a priority and duplicates for each issue."""

    kind: Literal["triage"]
    issues: list[dict[str, Any]] = Field(
        min_length=1, description="`gh issue list --json number,title,body,labels,author,createdAt`"
    )
    labels: InlineLabels = Field(
        description="a labels file's YAML text, {name: description}, or [{name, description}]"
    )
    concurrency: PositiveInt | None = None
    repo: str | None = Field(default=None, description="let workers read this project (read-only)")

    @field_validator("issues")
    @classmethod
    def _gh_issues(cls, issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
        _checked(inline_issues, issues)
        return issues

    @field_validator("labels")
    @classmethod
    def _label_set(cls, labels: InlineLabels) -> InlineLabels:
        _checked(inline_labels, labels)
        return labels


def _checked(parse: Callable[[_T], object], value: _T) -> None:
    """Run a pipeline's parser; its `InvalidInput` becomes the `ValueError` pydantic reports."""
    try:
        parse(value)
    except InvalidInput as exc:
        raise ValueError(str(exc)) from exc


PipelineRequest = ReviewRequest | RefactorRequest | TriageRequest
AnyRunRequest = ExecRequest | FanoutRequest | PipelineRequest
RunRequest = Annotated[AnyRunRequest, Field(discriminator="kind")]
RUN_REQUEST: TypeAdapter[AnyRunRequest] = TypeAdapter(RunRequest)


def request_fingerprint(request: AnyRunRequest) -> str:
    """A hash of what the request asks for, the same however its JSON was spelled."""
    shown = request.model_dump(mode="json", by_alias=True)
    canonical = json.dumps(shown, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
