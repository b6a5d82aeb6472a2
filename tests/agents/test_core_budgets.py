"""The core keeps every per-agent budget: it answers `OverBudget`, its driver feeds back the
`BudgetExceeded` it journals, and wall time comes in as `WallTimeUp`. Driven by hand."""

from __future__ import annotations

from corral.agents import (
    AgentCore,
    AgentStatus,
    BudgetExceeded,
    CallModel,
    CoreConfig,
    Finish,
    FunctionCall,
    FunctionCallOutput,
    ModelCompleted,
    ModelItem,
    ModelPrice,
    OverBudget,
    RunTools,
    ToolResult,
    Usage,
    WallTimeUp,
)

from .test_core import task

PRICE = ModelPrice(input_per_mtok=1.0, output_per_mtok=1.0)  # $1 per million tokens


def make_core(**budgets: object) -> AgentCore:
    config = CoreConfig(agent_id="agent-1", model="m", instructions="be useful")
    return AgentCore(CoreConfig(**{**config.__dict__, **budgets}))


def respond_with_call(core: AgentCore, call_id: str, tokens: int) -> list[object]:
    call = FunctionCall(call_id=call_id, name="shell", arguments="{}")
    core.handle(ModelItem(item=call))
    return list(core.handle(ModelCompleted(usage=Usage(input_tokens=tokens))))


def test_a_response_past_the_cost_budget_is_answered_with_the_verdict_then_ends_the_turn() -> None:
    core = make_core(max_cost_usd=0.001, price=PRICE)
    assert isinstance(core.handle(task())[0], CallModel)
    actions = respond_with_call(core, "c1", 1_500)
    assert actions == [OverBudget("cost budget exceeded: $0.0015 of $0.0010 spent")]
    assert core.spent_usd == 0.0015
    (finish,) = core.handle(BudgetExceeded(reason="cost budget exceeded: $0.0015 of $0.0010 spent"))
    assert finish == Finish(
        status=AgentStatus.BUDGET_EXCEEDED, error="cost budget exceeded: $0.0015 of $0.0010 spent"
    )
    outputs = [i for i in core.history if isinstance(i, FunctionCallOutput)]
    assert [o.success for o in outputs] == [False]  # the call never ran


def test_a_request_whose_input_would_overrun_the_cost_budget_is_never_asked_for() -> None:
    core = make_core(max_cost_usd=0.0025, price=PRICE)
    core.handle(task())
    assert isinstance(respond_with_call(core, "c1", 2_000)[0], RunTools)
    actions = core.handle(ToolResult(call_id="c1", output="x" * 4_000, success=True))
    (verdict,) = actions
    assert isinstance(verdict, OverBudget)
    assert verdict.reason.startswith("cost budget would be exceeded: $0.0020 spent")


def test_the_growth_breaker_stops_a_turn_that_costs_far_more_than_the_first() -> None:
    core = make_core(max_cost_growth=5.0, growth_baseline_turns=1)
    core.handle(task())
    respond_with_call(core, "c1", 100)
    core.handle(ToolResult(call_id="c1", output="ok", success=True))
    (verdict,) = respond_with_call(core, "c2", 1_000)
    assert isinstance(verdict, OverBudget)
    assert verdict.reason.startswith("cost growth breaker: turn 2 cost 1,000 tokens, 10.0x")


def test_the_wall_time_verdict_names_the_budget_and_a_finished_turn_ignores_it() -> None:
    core = make_core(max_wall_time_s=90.0)
    core.handle(task())
    (finish,) = core.handle(WallTimeUp())
    assert finish == Finish(
        status=AgentStatus.BUDGET_EXCEEDED, error="wall-time budget exceeded: 90 s"
    )
    assert core.handle(WallTimeUp()) == []


def test_a_config_with_a_price_crosses_to_a_workflow_as_plain_data_and_back() -> None:
    config = CoreConfig(agent_id="a", model="m", instructions="i", price=PRICE, max_cost_usd=2.0)
    data = config.to_data()
    assert data["price"] == {
        "input_per_mtok": 1.0,
        "cached_input_per_mtok": None,
        "output_per_mtok": 1.0,
    }
    assert CoreConfig.from_data(data) == config
