"""The arguments of corral's MCP tools: strict pydantic models, and the run requests they become.

Each start tool's arguments map onto the HTTP service's request of the same kind
(`service.ExecRequest` and its kin), so the MCP server admits, checks and runs them exactly as
`corral serve` does; what the two differ in is said here: items may come from a file under the
server's working folder (`_files`), `cwd` is the API's `cd`, and no `-c` config overrides are
taken. Every model forbids unknown fields, and its JSON schema is the tool's `inputSchema`.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from corral.agents import ROLES

from ..fanout import DEFAULT_MAX_RESULT_TRIES
from ..pipelines.review import Severity

MAX_WAIT_SECONDS: Final = 600.0
"""The longest one tool call waits for a run (a client calls `corral_status` again to go on)."""
MAX_PAGE: Final = 200
"""The most results one `corral_results` page holds."""
MAX_CONCURRENCY: Final = 1024
RUN_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"

Sandbox = Literal["read-only", "workspace-write", "full-access"]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _StartArgs(_Args):
    cwd: str | None = Field(
        default=None,
        description="working folder on the server (default: the server's own); it must be "
        "inside the server's allowed roots",
    )
    model: str | None = Field(default=None, description="model name (default: server's)")
    base_url: str | None = Field(
        default=None,
        description="model endpoint; only the server's own or its [service] allowed_base_urls",
    )
    wait_seconds: float = Field(
        default=0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description="wait this long for the run to end before answering, sending progress "
        "notifications if the call carries a progressToken (0: answer at once)",
    )
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=255,
        description="a call repeated with the same key (and arguments) answers with the run "
        "the first one started, so a retried call never starts a run twice",
    )

    def common(self) -> dict[str, Any]:
        """The request fields every run kind shares."""
        return {"cd": self.cwd, "model": self.model, "base_url": self.base_url}


class FanoutArgs(_StartArgs):
    """`corral_fanout`: one worker per item, each reporting a result checked against a schema."""

    items: list[dict[str, Any]] | None = Field(
        default=None, min_length=1, description="the items inline: one JSON object per worker"
    )
    items_file: str | None = Field(
        default=None,
        description="a JSON Lines file of items, relative to the server's working folder",
    )
    template: str = Field(min_length=1, description="the task; {field} is the item's field")
    result_schema: dict[str, Any] = Field(description="JSON Schema of each worker's result")
    concurrency: PositiveInt | None = Field(default=None, le=MAX_CONCURRENCY)
    sandbox: Sandbox | None = Field(
        default=None, description="never wider than the server's [service] max_sandbox"
    )
    max_result_tries: PositiveInt = Field(default=DEFAULT_MAX_RESULT_TRIES, le=10)

    @model_validator(mode="after")
    def _one_source(self) -> FanoutArgs:
        if (self.items is None) == (self.items_file is None):
            raise ValueError("give exactly one of items (inline) and items_file (a path)")
        return self


class ReviewArgs(_StartArgs):
    """`corral_review`: a git range (or a patch) reviewed by parallel read-only agents."""

    repo: str | None = Field(default=None, description="the repository (default: cwd)")
    range: str | None = Field(default=None, description="BASE..HEAD or BASE...HEAD")
    patch: str | None = Field(default=None, description="a unified diff, instead of range")
    concurrency: PositiveInt | None = Field(default=None, le=MAX_CONCURRENCY)
    fail_on: Literal["critical", "high", "medium", "low", "info", "none"] = Severity.HIGH.value


class TriageArgs(_StartArgs):
    """`corral_triage`: labels, type, priority and duplicates for each issue."""

    issues: list[dict[str, Any]] = Field(
        min_length=1, description="`gh issue list --json number,title,body,labels` objects"
    )
    labels: str | dict[str, str | None] | list[dict[str, Any]] = Field(
        description="the label set: {name: description}, [{name, description}] or YAML text"
    )
    repo: str | None = Field(default=None, description="let workers read this project")
    concurrency: PositiveInt | None = Field(default=None, le=MAX_CONCURRENCY)


class ExecArgs(_StartArgs):
    """`corral_exec`: one agent on a task (a supervisor spawns its own workers)."""

    task: str = Field(min_length=1)
    role: str = Field(
        default="general",
        description=f"one of {', '.join(ROLES)}, or a role of the server's config",
    )
    sandbox: Sandbox | None = Field(
        default=None, description="never wider than the server's [service] max_sandbox"
    )


class RunArgs(_Args):
    """A run by id."""

    run_id: str = Field(pattern=RUN_ID_PATTERN)


class StatusArgs(RunArgs):
    wait_seconds: float = Field(
        default=0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description="wait up to this long for the run to end, with progress notifications",
    )


class ResultsArgs(RunArgs):
    offset: int = Field(default=0, ge=0, description="index of the first item to show")
    limit: int = Field(default=50, ge=1, le=MAX_PAGE)


class RunsArgs(_Args):
    status: str | None = Field(default=None, description="only runs with this status")
    limit: int = Field(default=50, ge=1, le=MAX_PAGE)


def tool_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema as a tool's `inputSchema`: refs inlined, titles dropped."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    schema: dict[str, Any] = _inline(raw, defs)
    return schema


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(value, defs) for value in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _inline({**defs[ref.removeprefix("#/$defs/")], **rest}, defs)
    # A schema's `title` is a string; a property called "title" is a mapping, and stays.
    return {
        k: _inline(v, defs) for k, v in node.items() if not (k == "title" and isinstance(v, str))
    }
