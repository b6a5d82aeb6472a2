"""The API's wire formats: run requests (validated by pydantic) and what a submission returns.

A request's fields mirror the CLI command's long options with `-` turned into `_`; files are
replaced by inline values (`items` a list of objects, `schema` an object, `template` a string).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, TypeAdapter, field_validator

from agents import ROLES

from ..fanout import DEFAULT_MAX_RESULT_TRIES

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


class ExecRequest(_RunRequest):
    """`corral exec`: one agent on a task."""

    kind: Literal["exec"]
    task: str = Field(min_length=1)
    role: str = "general"

    @field_validator("role")
    @classmethod
    def _known_role(cls, role: str) -> str:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
        return role


class FanoutRequest(_RunRequest):
    """`corral fanout`: one worker per item, each reporting a schema-checked result."""

    kind: Literal["fanout"]
    items: list[dict[str, Any]] = Field(min_length=1)
    template: str = Field(min_length=1)
    result_schema: dict[str, Any] = Field(alias="schema")
    concurrency: PositiveInt | None = None
    max_result_tries: PositiveInt = DEFAULT_MAX_RESULT_TRIES


RunRequest = Annotated[ExecRequest | FanoutRequest, Field(discriminator="kind")]
RUN_REQUEST: TypeAdapter[ExecRequest | FanoutRequest] = TypeAdapter(RunRequest)
