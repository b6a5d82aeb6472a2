"""What crosses between corral's workflows, activities and the executor: pydantic models only.

Everything here is plain data (JSON-friendly), so it can sit in Temporal's history and be read
back on replay. Agent specs travel without their API key (`AgentSpec.to_journal`); the worker
reads the key from its own environment. Journal events travel as `event_to_payload` dicts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SHARED_QUEUE = "corral"
HOST_QUEUE_PREFIX = "corral-host-"


def host_queue(host: str) -> str:
    """The task queue only the worker on host `host` polls."""
    return f"{HOST_QUEUE_PREFIX}{host}"


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ActivityPolicy(_Wire):
    """Timeouts and retries of the activities, chosen by the executor from corral's config.

    Host activities (tools, preparing a workspace) must start within `host_start_s` and
    heartbeat every `heartbeat_s`: a host that misses either is taken for dead, and its items
    restart elsewhere.
    """

    model_attempts: int = Field(default=5, ge=1)
    model_timeout_s: float = Field(default=600.0, gt=0)
    tool_timeout_s: float = Field(default=3600.0, gt=0)
    heartbeat_s: float = Field(default=10.0, gt=0)
    host_start_s: float = Field(default=60.0, gt=0)
    journal_attempts: int = Field(default=10, ge=1)
    journal_timeout_s: float = Field(default=60.0, gt=0)
    """Journal writes and host claims: short, so a worker that dies holding one is soon passed
    over."""
    max_host_restarts: int = Field(default=3, ge=0)


class JournalBatch(_Wire):
    """Events for one agent's journal, the first at `first_seq`; writing it twice adds nothing."""

    agent_id: str
    first_seq: int = Field(ge=1)
    events: tuple[dict[str, Any], ...] = ()


class FanoutRunInput(_Wire):
    """The run workflow's argument: a checked fan-out, as `run_fanout` would journal it."""

    run_id: str
    settings: dict[str, Any]
    """`FanoutSettings` as JSON (the run record's config)."""
    items: tuple[dict[str, Any], ...]
    """Each item's JSON object, in order; item `i` is `items[i]`."""
    concurrency: int = Field(ge=1)
    policy: ActivityPolicy = ActivityPolicy()


class ItemInput(_Wire):
    """One item's child workflow argument."""

    run_id: str
    index: int
    data: dict[str, Any]
    template: str
    worker: dict[str, Any]
    """The workers' prototype spec (`AgentSpec.to_journal`, agent id blank)."""
    policy: ActivityPolicy


class PrepareInput(_Wire):
    """Set up item `index`'s agent on the host that holds its workspace."""

    item: ItemInput
    agent_id: str
    host: str


class PreparedAgent(_Wire):
    """What the workflow needs to hold the agent's core: its config and its first event."""

    spec: dict[str, Any]
    core_config: dict[str, Any]
    first_event: dict[str, Any]
    max_wall_time_s: float | None = None
    max_cost_usd: float | None = None


class ModelCallInput(_Wire):
    spec: dict[str, Any]
    request: dict[str, Any]
    journal: JournalBatch
    summary: bool = False
    """A compaction summary: nothing is journaled for the call itself."""


class ModelCallOutput(_Wire):
    """The call's events, already journaled in order (or the error, for a failed call)."""

    events: tuple[dict[str, Any], ...] = ()
    error: str | None = None
    cost_usd: float = 0.0
    usage: dict[str, Any] = Field(default_factory=dict)
    summary: str = ""


class ToolBatchInput(_Wire):
    spec: dict[str, Any]
    calls: tuple[dict[str, Any], ...]
    journal: JournalBatch


class ToolBatchOutput(_Wire):
    """`tool_result` events in call order, already journaled, and the host that ran them."""

    events: tuple[dict[str, Any], ...]
    host: str


class FinishInput(_Wire):
    run_id: str
    index: int
    agent_id: str
    status: str
    message: str | None = None
    error: str | None = None
    usage: dict[str, Any] = Field(default_factory=dict)
    cost_usd: float = 0.0
    journal: JournalBatch
    tool_hosts: tuple[str, ...] = ()


class HostLostInput(_Wire):
    run_id: str
    index: int
    agent_id: str
    host: str
    reason: str


class ItemResult(_Wire):
    index: int
    status: str
    agent_id: str
    tool_hosts: tuple[str, ...] = ()
    restarts: int = 0


class RunOutput(_Wire):
    """The run workflow's result: every item's journal record and how each was carried out."""

    run_id: str
    records: tuple[dict[str, Any], ...]
    items: tuple[ItemResult, ...]
