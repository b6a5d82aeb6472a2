"""The jobs an executor carries out: what a run is asked to do, checked once when it is made.

A job is data only (frozen pydantic): the local engines (`run_single_agent`, the fan-out) and the
Temporal executor read the same object, and the service and the commands build it. A worker's
shape (role, tools, sandbox narrowing, extra instructions) is a `WorkerTemplate`; it applies to
the config the workers are built from, and never widens it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from corral.agents import CorralConfig
from corral.tools import ApprovalPolicy, InvalidInput, SandboxMode

DEFAULT_MAX_RESULT_TRIES = 3
FanoutKind = Literal["fanout", "review", "triage"]
"""The kinds of run whose journal record is a fan-out's: review and triage each run one."""
FANOUT_KINDS: tuple[FanoutKind, ...] = ("fanout", "review", "triage")
"""Invalid results a fan-out worker may send before its item fails."""
_WIDTH = (SandboxMode.READ_ONLY, SandboxMode.WORKSPACE_WRITE, SandboxMode.FULL_ACCESS)


class JobInputError(InvalidInput):
    """A job was asked for with a value it cannot take (a count below 1)."""


class WorkerTemplate(BaseModel):
    """What every worker of a run shares besides the config: its role, its core tools (None:
    all), a narrower sandbox and approval policy, and instructions after the config's own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str = "general"
    tools: tuple[str, ...] | None = None
    sandbox: SandboxMode | None = None
    approval: ApprovalPolicy | None = None
    instructions: str | None = None

    def shape(self, config: CorralConfig) -> CorralConfig:
        """`config` as the workers see it: the sandbox only ever narrowed."""
        update: dict[str, Any] = {}
        if self.sandbox is not None:
            mode = min(SandboxMode(config.sandbox_mode), self.sandbox, key=_WIDTH.index)
            update["sandbox_mode"] = mode
            if mode is SandboxMode.READ_ONLY:
                update["writable_roots"] = ()
        if self.approval is not None:
            update["approval_policy"] = self.approval
        if self.instructions:
            extra = config.developer_instructions
            joined = f"{extra.strip()}\n\n{self.instructions}" if extra else self.instructions
            update["developer_instructions"] = joined
        return config.model_copy(update=update) if update else config


class _Job(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    run_id: str | None = None
    """The run's id; a new one is made when the run starts if none is given."""


class ExecJob(_Job):
    """`corral exec`: one root agent on `task` (a supervisor spawns its own workers)."""

    kind: Literal["exec"] = "exec"
    cwd: Path
    task: str
    role: str = "general"


class FanoutJob(_Job):
    """`corral fanout`: one worker per item on `template`, each reporting a `result_schema`
    result. `items` are `FanoutItem`s or plain mappings; `result_schema` a JSON Schema or a
    `ResultSchema`; `out` a results file, or "-" for the caller to print them."""

    kind: Literal["fanout"] = "fanout"
    cwd: Path
    items: tuple[Any, ...]
    template: str
    result_schema: Any
    concurrency: int | None = None
    """Workers at once; `config.agents.fanout_concurrency` when None."""
    processes: int | None = None
    """Worker processes (the local executor's); chosen from the cores and the size when None."""
    max_result_tries: int = DEFAULT_MAX_RESULT_TRIES
    out: Path | str | None = None
    worker: WorkerTemplate = WorkerTemplate()
    run_kind: FanoutKind = "fanout"
    """The kind the run is journaled and listed as: the pipeline's that runs this fan-out."""

    @model_validator(mode="after")
    def _counts_of_at_least_one(self) -> FanoutJob:
        for name in ("concurrency", "processes", "max_result_tries"):
            value = getattr(self, name)
            if value is not None and value < 1:
                # Not a ValueError: pydantic lets it through as the one-line error it is.
                raise JobInputError(f"{name} must be at least 1, not {value}")
        return self
