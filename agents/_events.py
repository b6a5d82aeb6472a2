"""What the agent core is fed (events) and what it answers (actions).

Events are pydantic models with a `kind` tag so the journal can store them and replay them into a
fresh core byte for byte. Actions are plain frozen dataclasses: they are instructions to a
driver and are never stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from corral.tools import HookRun

from ._compaction import DroppedItems
from ._environment import EnvironmentContext
from ._items import FunctionCall, Item, Usage
from .model._types import ModelRequest


class AgentStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    BUDGET_EXCEEDED = "budget_exceeded"

    @property
    def is_final(self) -> bool:
        return self not in (AgentStatus.PENDING, AgentStatus.RUNNING)


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class TurnContext(_Event):
    """The injected context for a turn; the core sends all of it first, then only what changed.

    Fragments arrive rendered (with their markers); the environment arrives as data so the core
    can compute the diff.
    """

    environment: EnvironmentContext
    permissions: str
    developer_instructions: str | None = None
    skills: str | None = None
    agents_md: str | None = None
    subagent_context: str | None = None
    memory: str | None = None
    """The marked memory fragment recalled for this turn (sent last, and again only if it
    changed, so earlier input is never rewritten)."""


class UserInput(_Event):
    """A task or message. `attachments` are marked fragments sent right after it, for this turn
    only (the bodies of skills it mentions by `$name`)."""

    kind: Literal["user_input"] = "user_input"
    text: str
    context: TurnContext
    attachments: tuple[str, ...] = ()


class ModelItem(_Event):
    """One output item of the model call in flight, as it finished streaming."""

    kind: Literal["model_item"] = "model_item"
    item: Item


class ModelCompleted(_Event):
    kind: Literal["model_completed"] = "model_completed"
    usage: Usage
    model: str = ""


class ModelFailed(_Event):
    kind: Literal["model_failed"] = "model_failed"
    error: str


class ToolResult(_Event):
    """A call's answer. With `total_bytes` set, `output` is already cut to what the model sees
    (see `visible_result`) and the core keeps it as it is; `total_bytes` and `sha256` describe
    the whole output the tool produced. Without it (older journals), the core cuts `output`."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    output: str
    success: bool = True
    total_bytes: int | None = None
    sha256: str | None = None
    network_denials: tuple[str, ...] = ()
    """Connections corral's proxy refused during the call (`host: reason`)."""
    hook_runs: tuple[HookRun, ...] = ()
    """The user's hooks that ran around the call."""
    images: tuple[str, ...] = ()
    """Images the tool showed (data URLs): they follow the batch's outputs as user input."""


class CompactionDone(_Event):
    """The summary for the last `Compact` action; `dropped` records what it removed."""

    kind: Literal["compaction_done"] = "compaction_done"
    summary: str
    usage: Usage = Usage()
    dropped: DroppedItems | None = None


class CompactionPrepared(_Event):
    """The outcome of a background `PrepareCompaction`: its summary, or why there is none.

    It may arrive in any state; the core applies it at its next request if it is still current
    and ignores it if a compaction or the end of the turn made it stale.
    """

    kind: Literal["compaction_prepared"] = "compaction_prepared"
    prepared_id: int
    covered_items: int
    summary: str = ""
    usage: Usage = Usage()
    dropped: DroppedItems | None = None
    error: str | None = None


class CompactRequested(_Event):
    """Compact an idle agent's history now (manual compaction)."""

    kind: Literal["compact_requested"] = "compact_requested"


class CompactionFailed(_Event):
    kind: Literal["compaction_failed"] = "compaction_failed"
    error: str


class BudgetExceeded(_Event):
    """A budget ended the turn: the core's own verdict (answered as `OverBudget`) or one kept
    outside it (the run's shared budget, its deadline)."""

    kind: Literal["budget_exceeded"] = "budget_exceeded"
    reason: str


class WallTimeUp(_Event):
    """The driver's clock says the turn has used its wall-time budget (`max_wall_time_s`)."""

    kind: Literal["wall_time_up"] = "wall_time_up"


RUN_CANCELLED = "the run was cancelled"
"""Why an agent stopped when its whole run was cancelled; the same words on both executors."""
INTERRUPTED_FOR_INPUT = "interrupted by its parent to take new input"


class Interrupt(_Event):
    kind: Literal["interrupt"] = "interrupt"
    reason: str = "interrupted by the user"


class Notify(_Event):
    """A marked fragment (e.g. a subagent notification) to show the model on its next request,
    as a user message, or a developer one (`<model_switch>`)."""

    kind: Literal["notify"] = "notify"
    text: str
    role: Literal["user", "developer"] = "user"


class ToolsChanged(_Event):
    """The agent's tool list changed (new MCP tools, tools found by search); sent from the
    next request on. Drivers append new tools at the end so earlier prefixes stay valid."""

    kind: Literal["tools_changed"] = "tools_changed"
    tools: tuple[dict[str, Any], ...]


class ResponseDiscarded(_Event):
    """The model call in flight is asked again: the items of its unfinished response (journaled
    before the process stopped) are dropped, so a replay does not mix them with the new ones."""

    kind: Literal["response_discarded"] = "response_discarded"


class Resume(_Event):
    """Carry on after an interruption or failure, from the journaled history."""

    kind: Literal["resume"] = "resume"


Event = Annotated[
    UserInput
    | ModelItem
    | ModelCompleted
    | ModelFailed
    | ToolResult
    | CompactionDone
    | CompactionFailed
    | CompactionPrepared
    | CompactRequested
    | BudgetExceeded
    | WallTimeUp
    | Interrupt
    | Notify
    | ToolsChanged
    | ResponseDiscarded
    | Resume,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

NOTE_KINDS = frozenset(
    {
        "agent_queued",
        "agent_started",
        "agent_finished",
        "item_started",
        "item_finished",
        "approval_requested",
        "approval_answered",
        "hook_ran",
    }
)
"""Journal kinds that record what happened around an agent (for streams and audits) but are not
inputs of its core; replay skips them."""


def event_to_payload(event: Event) -> dict[str, Any]:
    payload: dict[str, Any] = EVENT_ADAPTER.dump_python(event, mode="json")
    return payload


def event_from_payload(payload: dict[str, Any]) -> Event:
    return EVENT_ADAPTER.validate_python(payload)


# -- actions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallModel:
    request: ModelRequest


@dataclass(frozen=True)
class RunTools:
    calls: tuple[FunctionCall, ...]


@dataclass(frozen=True)
class Compact:
    """Summarise the history: call the model with `request`, answer `CompactionDone` carrying
    `dropped` (or `CompactionFailed`). The agent stalls until then."""

    request: ModelRequest
    dropped_items: int
    dropped: DroppedItems = field(default_factory=DroppedItems)


@dataclass(frozen=True)
class PrepareCompaction:
    """Summarise the first `covered_items` items in the background, alongside the actions that
    follow, and answer `CompactionPrepared` with `prepared_id` and `dropped` when done.

    A driver that cannot run it in the background may drop it: the core then compacts in the
    foreground when it must. A driver abandons it when the agent finishes.
    """

    prepared_id: int
    request: ModelRequest
    covered_items: int
    dropped: DroppedItems


@dataclass(frozen=True)
class AwaitPreparedCompaction:
    """The context is full and background preparation `prepared_id` is still running: wait for
    it and answer its `CompactionPrepared`. A driver that no longer runs it (after a restart)
    answers `CompactionPrepared` with an `error`, and the core compacts in the foreground."""

    prepared_id: int
    covered_items: int


@dataclass(frozen=True)
class OverBudget:
    """The core's verdict: a budget it keeps is spent. Journal it by feeding back
    `BudgetExceeded(reason)`, which ends the turn (a replay then needs no price to agree)."""

    reason: str


@dataclass(frozen=True)
class Finish:
    status: AgentStatus
    message: str | None = None
    error: str | None = None


Action = (
    CallModel
    | RunTools
    | Compact
    | PrepareCompaction
    | AwaitPreparedCompaction
    | OverBudget
    | Finish
)
