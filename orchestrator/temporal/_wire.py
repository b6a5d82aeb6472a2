"""What crosses between corral's workflows, activities and the executor: pydantic models only.

Everything here is plain data (JSON-friendly), so it can sit in Temporal's history and be read
back on replay. Agent specs travel without their API key (`AgentSpec.to_journal`); the worker
reads the key from its own environment. Journal events travel as `event_to_payload` dicts.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from corral.agents import AgentsConfig, AgentSpec, RoleConfig

SHARED_QUEUE = "corral"
HOST_QUEUE_PREFIX = "corral-host-"


def host_queue(host: str) -> str:
    """The task queue only the worker on host `host` polls."""
    return f"{HOST_QUEUE_PREFIX}{host}"


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WireShell(BaseModel):
    """The part of an agent's `[shell]` settings its workflow reads."""

    model_config = ConfigDict(frozen=True, extra="allow")

    approval_timeout_sec: float


class WireSpec(BaseModel):
    """An agent's spec as it travels: `AgentSpec.to_journal()` (no API key), typed where the
    workflows read it and carried whole, so an activity rebuilds the `AgentSpec` from it
    (`WorkerServices.spec_of`, which adds the key from its worker's environment). It is not
    validated as an `AgentSpec` here: that resolves paths, which is the host's to do."""

    model_config = ConfigDict(frozen=True, extra="allow")

    agent_id: str
    run_id: str
    parent_id: str | None = None
    nickname: str = "main"
    role: str = "general"
    depth: int = 0
    tools: tuple[str, ...]
    cwd: str
    shell: WireShell

    @classmethod
    def of(cls, spec: AgentSpec) -> WireSpec:
        return cls.model_validate(spec.to_journal())

    def journaled(self) -> dict[str, Any]:
        """The spec as `AgentSpec.to_journal` wrote it."""
        return self.model_dump(mode="json")


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
    continue_as_new_after: int | None = Field(default=None, ge=1)
    """Continue an agent's workflow as new once its history holds this many events (besides
    whenever the server suggests it); mostly for tests, as the server's suggestion comes late."""


class JournalBatch(_Wire):
    """Events for one agent's journal, the first at `first_seq`; writing it twice adds nothing."""

    agent_id: str
    first_seq: int = Field(ge=1)
    events: tuple[dict[str, Any], ...] = ()


class RunLimits(_Wire):
    """`[budgets] run_*`: the limits every agent of the run shares, kept by the run's workflow."""

    run_max_tokens: int | None = None
    run_max_cost_usd: float | None = None
    run_max_tool_calls: int | None = None
    run_max_turns: int | None = None
    run_max_wall_time_s: float | None = None

    @property
    def counted(self) -> bool:
        """Whether agents must report what each model call spent."""
        counts = (self.run_max_tokens, self.run_max_cost_usd, self.run_max_tool_calls)
        return any(limit is not None for limit in (*counts, self.run_max_turns))

    @property
    def any_set(self) -> bool:
        return self.counted or self.run_max_wall_time_s is not None


class RunTerms(_Wire):
    """What an agent of a run with limits knows of them: the limits, and the run's deadline
    (seconds since the epoch, workflow time) when it has a wall-time budget."""

    limits: RunLimits
    deadline: float | None = None


class RunCharge(_Wire):
    """One model call's spending, reported by an agent's workflow to its run's workflow (the
    `run_charge` signal); the run answers `token` with a `RunVerdict`."""

    workflow_id: str
    token: str
    usage: dict[str, Any]
    cost_usd: float = 0.0
    tool_calls: int = 0


class RunVerdict(_Wire):
    """The run's answer to a charge (`token`), or news that its budget is exhausted (`stop`)."""

    token: str | None = None
    stop: str | None = None


class FanoutRunInput(_Wire):
    """The run workflow's argument: a checked fan-out, as `run_fanout` would journal it."""

    run_id: str
    settings: dict[str, Any]
    """`FanoutSettings` as JSON (the run record's config)."""
    items: tuple[dict[str, Any], ...]
    """Each item's JSON object, in order; item `i` is `items[i]`."""
    concurrency: int = Field(ge=1)
    policy: ActivityPolicy = ActivityPolicy()
    run_limits: RunLimits = RunLimits()
    kind: Literal["fanout", "review", "triage"] = "fanout"
    """What the run is journaled as: a pipeline's fan-out is listed as the pipeline's run."""


class AgentCarry(_Wire):
    """What an agent's workflow hands to its next run when it continues as new: who and where
    the agent is, and its driver's counters. The core itself is rebuilt from the journal."""

    agent_id: str
    host: str
    spec: WireSpec
    core_config: dict[str, Any]
    cost_usd: float = 0.0
    max_cost_usd: float | None = None
    max_wall_time_s: float | None = None
    wall_used_s: float = 0.0
    tool_hosts: tuple[str, ...] = ()
    restarts: int = 0
    hook_events: tuple[str, ...] = ()


class ItemInput(_Wire):
    """One item's child workflow argument."""

    run_id: str
    index: int
    data: dict[str, Any]
    template: str
    worker: WireSpec
    """The workers' prototype spec (its agent id blank)."""
    policy: ActivityPolicy
    carry: AgentCarry | None = None
    """Set when the item's workflow continued as new in the middle of its agent's work."""
    run_terms: RunTerms | None = None
    """The run's limits, when it has any."""


class PrepareInput(_Wire):
    """Set up item `index`'s agent on the host that holds its workspace."""

    item: ItemInput
    agent_id: str
    host: str


class PreparedAgent(_Wire):
    """What the workflow needs to hold the agent's core: its config and its first event."""

    spec: WireSpec
    core_config: dict[str, Any]
    first_event: dict[str, Any] | None
    """None when a start hook blocked the task (`blocked`)."""
    max_wall_time_s: float | None = None
    max_cost_usd: float | None = None
    notes: tuple[dict[str, Any], ...] = ()
    """The start hooks' `hook_ran` notes, journaled before `first_event`."""
    blocked: str | None = None
    hook_events: tuple[str, ...] = ()
    """The lifecycle events the worker's `[hooks]` runs commands on."""


class ModelCallInput(_Wire):
    spec: WireSpec
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


class ApprovalAsk(_Wire):
    """A tool call that needs someone's approval before it may go on; `approval_id` is unique
    within the asking agent's workflow (`<call id>.<kind>`)."""

    approval_id: str
    call_id: str
    agent_id: str
    tool: str
    command: str
    cwd: str
    reason: str
    kind: str


class ApprovalAnswer(_Wire):
    """The answer to one ask: through the `approve` update, or a denial at the deadline."""

    approval_id: str
    call_id: str
    approve: bool
    reason: str = ""
    who: str = "api"


class _Note(BaseModel):
    # Read back from journals written by earlier versions too: unknown keys are passed over.
    model_config = ConfigDict(frozen=True, extra="ignore")


class RequestedNote(_Note):
    """The journal's `approval_requested` note of an ask on Temporal: what is asked, and where to
    answer it (the ask's own kind, escalate and the like, is `approval_kind`)."""

    kind: Literal["approval_requested"] = "approval_requested"
    approval_id: str
    call_id: str
    agent_id: str
    tool: str
    command: str
    cwd: str
    reason: str
    approval_kind: str
    workflow_id: str
    timeout_s: float = 0.0


class AnsweredNote(_Note):
    """The journal's `approval_answered` note: the decision, why, and who gave it."""

    kind: Literal["approval_answered"] = "approval_answered"
    approval_id: str
    decision: Literal["approve", "deny"]
    reason: str = ""
    who: str = "api"


class ToolBatchInput(_Wire):
    spec: WireSpec
    calls: tuple[dict[str, Any], ...]
    journal: JournalBatch
    answers: tuple[ApprovalAnswer, ...] = ()
    """Decisions already made for asks of these calls: the calls run again, and their
    approver answers from here instead of asking."""


class ToolBatchOutput(_Wire):
    """`tool_result` events of the calls that finished, already journaled, the host that ran
    them, and the asks of the calls held back until someone answers them."""

    events: tuple[dict[str, Any], ...]
    host: str
    asks: tuple[ApprovalAsk, ...] = ()


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


class SkippedItems(_Wire):
    """Items a fan-out never started (its budget was spent), with the reason each failed."""

    run_id: str
    errors: dict[int, str]


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


# -- exec runs: a root agent and the workers it spawns ---------------------------------------


def agent_workflow_id(run_id: str, agent_id: str) -> str:
    """The id of the workflow that holds agent `agent_id` of run `run_id`."""
    return f"{run_id}.{agent_id}"


class CollabLimits(_Wire):
    """What the collab tools need from the run's config: its limits, personality and roles."""

    max_depth: int = Field(default=1, ge=1)
    max_threads: int = Field(default=6, ge=1)
    max_queued_spawns: int = Field(default=64, ge=0)
    personality: str = "pragmatic"
    roles: dict[str, RoleConfig] = {}
    """The config's own roles, their files read when the run started (so every worker host
    offers and uses the same ones, whatever its own config says)."""

    def agents(self) -> AgentsConfig:
        """The `[agents]` limits and roles, for the spawning code both executors share."""
        return AgentsConfig(
            max_depth=self.max_depth,
            max_threads=self.max_threads,
            max_queued_spawns=self.max_queued_spawns,
            roles=self.roles,
        )


class AgentInput(_Wire):
    """One agent's workflow argument: its spec, its task, and whom to tell when it ends."""

    run_id: str
    spec: WireSpec
    task: str
    subagent_context: str | None = None
    parent_workflow_id: str | None = None
    limits: CollabLimits = CollabLimits()
    policy: ActivityPolicy = ActivityPolicy()
    carry: AgentCarry | None = None
    """Set when the agent's workflow continued as new in the middle of a turn."""
    inbox: tuple[str, ...] = ()
    """Messages that had come in for the agent's next turn when it continued as new."""
    run_terms: RunTerms | None = None
    """The run's limits, when it has any (set by the run's workflow)."""


class AgentOutput(_Wire):
    agent_id: str
    status: str
    message: str | None = None
    error: str | None = None
    run_stop: str | None = None
    """Why the run's budget stopped the agent, if it did: its parent then admits no worker."""
    host: str | None = None
    """The host the agent last ran on: the run's memories are extracted there, where its
    folder (and so its project) is."""


class ExecRunInput(_Wire):
    """The run workflow's argument for a run started from one task (`corral exec`)."""

    run_id: str
    root: AgentInput
    role: str = "general"
    run_limits: RunLimits = RunLimits()


class ExecOutput(_Wire):
    run_id: str
    root: AgentOutput


class SendInput(_Wire):
    """A parent's message to its worker (the `send_input` signal)."""

    message: str
    interrupt: bool = False


class PrepareSpecInput(_Wire):
    """Set up an agent of an exec run on its host: journal it and read its context."""

    spec: WireSpec
    task: str
    subagent_context: str | None = None
    limits: CollabLimits = CollabLimits()


class TurnContextInput(_Wire):
    spec: WireSpec
    subagent_context: str | None = None
    query: str = ""
    """The turn's messages as they stood: what memory is recalled for."""


class SpawnSpecInput(_Wire):
    """Build a worker's spec from its parent's and what `spawn_agent` asked for."""

    parent: WireSpec
    request: dict[str, Any]
    nickname: str
    limits: CollabLimits
    siblings: tuple[WireSpec, ...] = ()
    queued: bool = False
    """Past the thread limit: the worker is journaled waiting (`pending`) until it starts."""


class SpawnedSpec(_Wire):
    """The worker's spec and its `<subagent_context>`, or why it was refused."""

    spec: WireSpec | None = None
    subagent_context: str | None = None
    refused: str | None = None


class AgentEndedInput(_Wire):
    """An agent's turn ended (or it was stopped): journal its status and pending events."""

    agent_id: str
    status: str
    message: str | None = None
    error: str | None = None
    usage: dict[str, Any] = Field(default_factory=dict)
    cost_usd: float = 0.0
    journal: JournalBatch


class RememberInput(_Wire):
    """A completed exec run's root agent, for memory to extract what it learned, once."""

    spec: WireSpec
    task: str
    limits: CollabLimits = CollabLimits()


class RememberFanoutInput(_Wire):
    """A fan-out whose every item is done, for memory to extract what its workers learned."""

    run_id: str
    worker: WireSpec
    template: str


class RunStatusInput(_Wire):
    run_id: str
    status: str
