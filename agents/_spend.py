"""What an agent spends, and the checks on it: its cost budget, a turn's cost running away, and
a request that would overrun a budget before it is sent.

`AgentSpend` is the core's: it prices each model response (`cost_of`), feeds its cost to a
`SpendBreaker`, and checks before every request what was spent plus the request's estimated
input cost (`request_overrun`). None of it does I/O; the core turns an answer into an
`OverBudget` action, which its driver answers with a journaled `BudgetExceeded` event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._config import ModelPrice
from ._items import Usage

DEFAULT_BASELINE_TURNS = 3
PER_MILLION = 1_000_000


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


NO_PRICE = "\u2014"


def format_cost(cost_usd: float) -> str:
    """A cost as people read it: dollars to four places, or a dash when nothing was charged
    (a model without a known price), so an unpriced run never claims `$0.0000`."""
    return f"${cost_usd:.4f}" if cost_usd > 0 else NO_PRICE


def cost_of(usage: Usage, price: ModelPrice | None) -> float:
    """The USD cost of `usage` at `price` (0 when the model has no price)."""
    if price is None:
        return 0.0
    cached = min(usage.cached_input_tokens, usage.input_tokens)
    cached_rate = price.cached_input_per_mtok
    if cached_rate is None:
        cached_rate = price.input_per_mtok
    fresh = usage.input_tokens - cached
    total = (
        fresh * price.input_per_mtok
        + cached * cached_rate
        + usage.output_tokens * price.output_per_mtok
    )
    return total / PER_MILLION


@dataclass
class AgentSpend:
    """One agent's spending against its own cost budget (`max_cost_usd`, None: no limit)."""

    price: ModelPrice | None
    max_cost_usd: float | None
    breaker: SpendBreaker
    spent_usd: float = 0.0

    def charge(self, usage: Usage) -> tuple[float, str | None]:
        """Count one model response: its cost, and why the agent must stop now, or None."""
        cost = cost_of(usage, self.price)
        self.spent_usd += cost
        growth = self.breaker.record(usage, cost)
        limit = self.max_cost_usd
        if limit is not None and self.spent_usd >= limit:
            return cost, f"cost budget exceeded: ${self.spent_usd:.4f} of ${limit:.4f} spent"
        return cost, growth

    def restart_baseline(self) -> None:
        """Count the growth breaker's baseline afresh from the next turn."""
        self.breaker = SpendBreaker(self.breaker.factor, self.breaker.baseline_turns)

    def estimate(self, input_tokens: int) -> float:
        """A request's input cost at the uncached price."""
        return cost_of(Usage(input_tokens=input_tokens), self.price)

    def before_request(self, input_tokens: int) -> str | None:
        """Why a request of `input_tokens` may not go (the cost budget), or None."""
        estimate = self.estimate(input_tokens)
        return request_overrun(self.spent_usd, estimate, self.max_cost_usd, "cost budget")
