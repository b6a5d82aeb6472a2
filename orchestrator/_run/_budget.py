"""Money and limits shared by every agent of a run: the price table and the run's budget.

Per-agent budgets live with each agent's core (turns, tool calls, tokens, cost, cost growth,
wall time). The run's budget is charged by every agent's model responses and answers, once
exhausted, the reason that ends whichever agent charged it next.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio

from corral.agents import BudgetConfig, ModelPrice, Usage, request_overrun
from corral.observability import missing_price, price_table


def wall_time_reason(limit: float) -> str:
    """Why a run out of wall time ends its agents; the same words on both executors."""
    return f"run wall-time budget exceeded: {limit:g} s"


def price_for(prices: Mapping[str, ModelPrice], model: str) -> ModelPrice | None:
    """The price of `model` from the configured prices over the built-in table: an exact
    entry, else the longest name that prefixes it. A model with none is warned about once."""
    table = price_table(prices)
    if missing_price(model, table):
        return None
    if model in table:
        return table[model]
    matches = [name for name in table if model.startswith(name)]
    return table[max(matches, key=len)]


@dataclass
class RunBudget:
    """The run-wide totals and limits (`budgets.run_*` in config)."""

    limits: BudgetConfig
    deadline: float | None = None
    """When the run's wall time is up, on anyio's clock (None: no `run_max_wall_time_s`)."""
    tokens: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0
    turns: int = 0
    _exhausted: str | None = field(default=None, repr=False)

    def charge(self, usage: Usage, cost: float, tool_calls: int) -> str | None:
        """Add one model response; answer why the run budget is exhausted, or None."""
        self.tokens += usage.total_tokens
        self.cost_usd += cost
        self.tool_calls += tool_calls
        self.turns += 1
        if self._exhausted is None:
            self._exhausted = self._check()
        return self._exhausted

    def add_prior(self, usage: Usage, cost: float, tool_calls: int, turns: int) -> None:
        """Count what a resumed agent had spent before the run stopped."""
        self.tokens += usage.total_tokens
        self.cost_usd += cost
        self.tool_calls += tool_calls
        self.turns += turns

    @classmethod
    def starting_now(cls, limits: BudgetConfig) -> RunBudget:
        """A budget whose wall time, if limited, counts from now (from this process's start of
        the run: a resumed run gets its whole wall time again)."""
        wall = limits.run_max_wall_time_s
        return cls(limits, deadline=None if wall is None else anyio.current_time() + wall)

    def wall_time(self) -> tuple[float, str] | None:
        """The run's deadline on anyio's clock and the reason it ends agents with, or None."""
        wall = self.limits.run_max_wall_time_s
        if self.deadline is None or wall is None:
            return None
        return self.deadline, wall_time_reason(wall)

    @property
    def exhausted(self) -> str | None:
        return self._exhausted

    def projected(self, estimate: float) -> str | None:
        """Why a request whose input is estimated at `estimate` USD may not go, or None."""
        if self._exhausted is not None:
            return self._exhausted
        return request_overrun(self.cost_usd, estimate, self.limits.run_max_cost_usd, "run budget")

    def _check(self) -> str | None:
        lim = self.limits
        checks: list[tuple[float | None, float, str]] = [
            (lim.run_max_tokens, self.tokens, "tokens"),
            (lim.run_max_cost_usd, self.cost_usd, "USD"),
            (lim.run_max_tool_calls, self.tool_calls, "tool calls"),
            (lim.run_max_turns, self.turns, "model requests"),
        ]
        for limit, used, what in checks:
            if limit is not None and used >= limit:
                return f"run budget exceeded: {used:g} of {limit:g} {what} used"
        return None
