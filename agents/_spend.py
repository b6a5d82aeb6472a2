"""Spend checks that fixed budgets miss: a turn's cost running away, and a request that would
overrun a budget before it is sent.

The runner asks `request_overrun` before every model request (what was spent plus the request's
estimated input cost, against the limit) and feeds each response's cost to a `SpendBreaker`.
Neither does I/O; the runner turns an answer into a `BudgetExceeded` event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._items import Usage

DEFAULT_BASELINE_TURNS = 3


@dataclass
class SpendBreaker:
    """Trips when one turn costs more than `factor` times the mean of the agent's first
    `baseline_turns` turns (model responses). Turns are measured in USD when the model has a
    price, else in tokens; a baseline of zero never trips."""

    factor: float | None
    baseline_turns: int = DEFAULT_BASELINE_TURNS
    _costs: list[float] = field(default_factory=list)
    _tokens: list[int] = field(default_factory=list)

    def record(self, usage: Usage, cost: float) -> str | None:
        """Count one turn; answer why the agent must stop, or None."""
        self._costs.append(cost)
        self._tokens.append(usage.total_tokens)
        turn = len(self._costs)
        if self.factor is None or turn <= self.baseline_turns:
            return None
        priced = sum(self._costs[: self.baseline_turns]) > 0
        series: list[float] = self._costs if priced else [float(t) for t in self._tokens]
        baseline = sum(series[: self.baseline_turns]) / self.baseline_turns
        if baseline <= 0 or series[-1] <= self.factor * baseline:
            return None
        return (
            f"cost growth breaker: turn {turn} cost {_amount(series[-1], priced)}, "
            f"{series[-1] / baseline:.1f}x the mean of the first {self.baseline_turns} turns "
            f"({_amount(baseline, priced)}); budgets.max_cost_growth = {self.factor:g}"
        )


def request_overrun(spent: float, estimate: float, limit: float | None, what: str) -> str | None:
    """Why a request estimated at `estimate` USD of input may not go, with `spent` USD spent
    already against `limit` (None: no limit); None when it fits."""
    if limit is None or spent + estimate <= limit:
        return None
    return (
        f"{what} would be exceeded: ${spent:.4f} spent and the next request's input alone "
        f"would cost about ${estimate:.4f}, past the limit of ${limit:.4f}"
    )


def _amount(value: float, priced: bool) -> str:
    return f"${value:.4f}" if priced else f"{value:,.0f} tokens"
