"""The spend breaker and the check before each request, fed by hand through the runner."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from corral.agents import (
    AgentStatus,
    BudgetConfig,
    MemoryStore,
    ModelPrice,
    ModelRequest,
    ModelResponse,
    RunnerLimits,
    SpendBreaker,
    Usage,
    request_overrun,
)
from corral.orchestrator._run import RunBudget

from .test_runner import call, first_input, make_runner, tools_with

PRICE = ModelPrice(input_per_mtok=1.0, output_per_mtok=1.0)  # $1 per million tokens


def test_the_breaker_compares_each_turn_with_the_mean_of_the_first_three() -> None:
    breaker = SpendBreaker(factor=4.0)
    for spent in (0.001, 0.002, 0.003):  # mean $0.002: more than $0.008 trips it
        assert breaker.record(Usage(input_tokens=10), spent) is None
    assert breaker.record(Usage(input_tokens=10), 0.008) is None
    reason = breaker.record(Usage(input_tokens=10), 0.0081)
    assert reason == (
        "cost growth breaker: turn 5 cost $0.0081, 4.0x the mean of the first 3 turns "
        "($0.0020); budgets.max_cost_growth = 4"
    )


def test_the_breaker_counts_tokens_for_a_model_without_a_price() -> None:
    breaker = SpendBreaker(factor=2.0, baseline_turns=1)
    assert breaker.record(Usage(input_tokens=1_000), 0.0) is None
    reason = breaker.record(Usage(input_tokens=2_500), 0.0)
    assert reason is not None and "turn 2 cost 2,500 tokens, 2.5x" in reason


def test_a_breaker_without_a_factor_or_a_baseline_never_trips() -> None:
    off, free = SpendBreaker(factor=None), SpendBreaker(factor=2.0, baseline_turns=1)
    assert free.record(Usage(), 0.0) is None
    for _ in range(5):
        assert off.record(Usage(input_tokens=10**6), 100.0) is None
        assert free.record(Usage(input_tokens=10**6), 100.0) is None


@pytest.mark.parametrize(
    ("spent", "estimate", "limit", "refused"),
    [
        (0.5, 0.4, 1.0, False),
        (0.5, 0.5, 1.0, False),
        (0.5, 0.51, 1.0, True),
        (9.0, 9.0, None, False),
    ],
)
def test_a_request_may_go_only_if_what_was_spent_plus_its_input_fits(
    spent: float, estimate: float, limit: float | None, refused: bool
) -> None:
    assert (request_overrun(spent, estimate, limit, "run budget") is not None) is refused


def test_the_run_budget_refuses_a_request_that_would_overrun_it() -> None:
    budget = RunBudget(BudgetConfig(run_max_cost_usd=1.0))
    budget.charge(Usage(input_tokens=1), 0.9, 0)
    assert budget.projected(0.05) is None
    reason = budget.projected(0.2)
    assert reason is not None and reason.startswith("run budget would be exceeded: $0.9000 spent")


def growing(request: ModelRequest) -> ModelResponse:
    """Each turn's input is ten times the one before: a context running away."""
    turn = sum(1 for item in request.input if getattr(item, "call_id", None)) // 2
    usage = Usage(input_tokens=100 * 10**turn, output_tokens=10)
    return ModelResponse(items=[call("quick", f"c{turn}")], usage=usage)


@pytest.mark.anyio
async def test_an_agent_whose_turns_grow_past_the_factor_is_stopped_with_the_reason() -> None:
    budgets = {"price": PRICE, "max_cost_growth": 5.0, "growth_baseline_turns": 1}
    store = MemoryStore()
    runner = await make_runner(
        growing, tools_with(anyio.Event(), anyio.Event()), store, budgets=budgets
    )
    finish = await runner.drive(await runner.feed(first_input()))
    assert finish.status is AgentStatus.BUDGET_EXCEEDED
    assert finish.error is not None and finish.error.startswith("cost growth breaker: turn 2")
    assert runner.core.model_requests == 2
    record = await store.get_agent(AGENT_ID)
    assert record is not None and record.error == finish.error


@pytest.mark.anyio
async def test_a_request_that_would_overrun_the_shared_budget_is_never_sent() -> None:
    sent: list[int] = []

    def answer(request: ModelRequest) -> Any:
        sent.append(len(request.input))
        return ModelResponse(items=[call("quick", f"c{len(sent)}")], usage=Usage(input_tokens=400))

    budget = RunBudget(BudgetConfig(run_max_cost_usd=0.001))
    limits = RunnerLimits(shared=budget.charge, projected=budget.projected)
    runner = await make_runner(
        answer,
        tools_with(anyio.Event(), anyio.Event()),
        MemoryStore(),
        limits=limits,
        budgets={"price": PRICE},
    )
    finish = await runner.drive(await runner.feed(first_input()))
    assert finish.status is AgentStatus.BUDGET_EXCEEDED
    assert finish.error is not None and finish.error.startswith("run budget would be exceeded")
    assert len(sent) == 2 and budget.cost_usd == pytest.approx(0.0008)


AGENT_ID = "agent-r"
