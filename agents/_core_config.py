"""What is fixed for an agent's life (`CoreConfig`) and what its core waits for (`Waiting`).

Plain values the core and its drivers share; the state machine itself is `_core`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from ._config import ModelPrice
from ._outputs import DEFAULT_MAX_TOOL_OUTPUT_BYTES
from ._spend import DEFAULT_BASELINE_TURNS

AUTO_COMPACT_PERCENT = 90
EARLY_COMPACT_PERCENT = 80


@dataclass(frozen=True)
class CoreConfig:
    """Everything fixed for the agent's life, its budgets included: the core keeps them all."""

    agent_id: str
    model: str
    instructions: str
    tools: tuple[dict[str, Any], ...] = ()
    hosted_tools: tuple[dict[str, Any], ...] = ()
    """Tools the provider runs (web search): sent after `tools`, never dispatched here."""
    context_window: int = 272_000
    auto_compact_token_limit: int | None = None
    early_compact_percent: int | None = EARLY_COMPACT_PERCENT
    tool_output_token_limit: int = 10_000
    max_turns: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    parallel_tool_calls: bool = True
    metadata: dict[str, str] = field(default_factory=dict)
    max_tool_output_bytes: int = DEFAULT_MAX_TOOL_OUTPUT_BYTES
    """The most of one tool output the journal keeps (and the model sees)."""
    max_cost_usd: float | None = None
    max_wall_time_s: float | None = None
    """Per turn; the driver keeps the clock and feeds `WallTimeUp` when it has run out."""
    max_cost_growth: float | None = None
    growth_baseline_turns: int = DEFAULT_BASELINE_TURNS
    price: ModelPrice | None = None
    """What the model's tokens cost (None: nothing, so only token growth is watched)."""

    def to_data(self) -> dict[str, Any]:
        """Plain JSON-friendly data (what crosses to a Temporal workflow)."""
        data = asdict(self)
        data["price"] = None if self.price is None else self.price.model_dump(mode="json")
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> CoreConfig:
        """The config `to_data` gave (fields it lacks, from an older corral, take defaults)."""
        fields = dict(data)
        fields["tools"] = tuple(fields.get("tools", ()))
        fields["hosted_tools"] = tuple(fields.get("hosted_tools", ()))
        fields["metadata"] = dict(fields.get("metadata", {}))
        price = fields.get("price")
        fields["price"] = None if price is None else ModelPrice.model_validate(price)
        return cls(**fields)

    @property
    def compact_limit(self) -> int:
        ceiling = self.context_window * AUTO_COMPACT_PERCENT // 100
        if self.auto_compact_token_limit is None:
            return ceiling
        return min(self.auto_compact_token_limit, ceiling)

    @property
    def early_compact_limit(self) -> int | None:
        """Where a background compaction starts: `early_compact_percent` of the window, and as
        far below a lowered `compact_limit` as the default is below 90%. None turns it off."""
        percent = self.early_compact_percent
        if percent is None:
            return None
        by_window = self.context_window * percent // 100
        return min(by_window, self.compact_limit * percent // AUTO_COMPACT_PERCENT)


class Waiting(StrEnum):
    """What the core awaits before it can go on."""

    INPUT = "input"
    """Idle: a user's (or parent's) message starts the next turn."""
    MODEL = "model"
    TOOLS = "tools"
    COMPACTION = "compaction"
    DONE = "done"
    """The turn ended (a `Finish` was answered); a message or `Resume` starts another."""

    @property
    def busy(self) -> bool:
        """Whether a turn is under way (messages are queued for its next request)."""
        return self in (Waiting.MODEL, Waiting.TOOLS, Waiting.COMPACTION)

    @property
    def idle(self) -> bool:
        return self in (Waiting.INPUT, Waiting.DONE)
