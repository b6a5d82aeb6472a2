"""What the agent core is fed (events) and what it answers (actions).

Events are pydantic models with a `kind` tag so the journal can store them and replay them into a
fresh core byte for byte. Actions are plain frozen dataclasses: they are instructions to a
driver and are never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

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
    agents_md: str | None = None
    subagent_context: str | None = None


class UserInput(_Event):
    kind: Literal["user_input"] = "user_input"
    text: str
    context: TurnContext


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
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    output: str
    success: bool = True


class CompactionDone(_Event):
    kind: Literal["compaction_done"] = "compaction_done"
    summary: str
    usage: Usage = Usage()


class CompactionFailed(_Event):
    kind: Literal["compaction_failed"] = "compaction_failed"
    error: str


class BudgetExceeded(_Event):
    kind: Literal["budget_exceeded"] = "budget_exceeded"
    reason: str


class Interrupt(_Event):
    kind: Literal["interrupt"] = "interrupt"
    reason: str = "interrupted by the user"


class Notify(_Event):
    """A marked fragment (e.g. a subagent notification) to show the model on its next request."""

    kind: Literal["notify"] = "notify"
    text: str


class ToolsChanged(_Event):
    """The agent's tool list changed (new MCP tools, tools found by search); sent from the
    next request on. Drivers append new tools at the end so earlier prefixes stay valid."""

    kind: Literal["tools_changed"] = "tools_changed"
    tools: tuple[dict[str, Any], ...]


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
    | BudgetExceeded
    | Interrupt
    | Notify
    | ToolsChanged
    | Resume,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


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
    """Summarise the history: call the model with `request`, answer `CompactionDone`."""

    request: ModelRequest
    dropped_items: int


@dataclass(frozen=True)
class Finish:
    status: AgentStatus
    message: str | None = None
    error: str | None = None


Action = CallModel | RunTools | Compact | Finish
