"""`carry_out`: the one loop both executors drive a core with, over an in-memory `Effects`."""

from __future__ import annotations

import pytest

from corral.agents import (
    Action,
    AgentStatus,
    AwaitPreparedCompaction,
    CallModel,
    Compact,
    Effects,
    Finish,
    ModelRequest,
    OverBudget,
    PrepareCompaction,
    RunTools,
    carry_out,
)

pytestmark = pytest.mark.anyio

DONE = Finish(status=AgentStatus.COMPLETED, message="done")
REASON = "cost budget exceeded: $2.0000 of $1.0000 spent"
ASK = CallModel(ModelRequest(model="m", instructions="i", input=()))


class Script:
    """An `Effects` that answers each kind of action from a script and records what it did."""

    def __init__(self, *, stop_after: int | None = None) -> None:
        self.done: list[str] = []
        self.stop_after = stop_after

    async def call_model(self, action: CallModel) -> list[Action]:
        self.done.append("model")
        return [RunTools(())]

    async def run_tools(self, action: RunTools) -> list[Action]:
        self.done.append("tools")
        return [OverBudget(REASON)]

    async def compact(self, action: Compact) -> list[Action]:
        raise AssertionError("not asked")

    async def prepare_compaction(self, action: PrepareCompaction) -> list[Action]:
        raise AssertionError("not asked")

    async def await_preparation(self, action: AwaitPreparedCompaction) -> list[Action]:
        raise AssertionError("not asked")

    async def over_budget(self, action: OverBudget) -> list[Action]:
        self.done.append(f"verdict: {action.reason}")
        return [Finish(status=AgentStatus.BUDGET_EXCEEDED, error=action.reason)]

    async def between_steps(self, queue: list[Action]) -> Finish | None:
        if self.stop_after is not None and len(self.done) >= self.stop_after:
            return Finish(status=AgentStatus.INTERRUPTED, error="stopped between steps")
        return None


async def test_each_action_goes_to_its_effect_until_the_core_finishes() -> None:
    script = Script()
    effects: Effects = script
    finish = await carry_out([ASK], effects)
    assert script.done == [
        "model",
        "tools",
        "verdict: cost budget exceeded: $2.0000 of $1.0000 spent",
    ]
    assert finish.status is AgentStatus.BUDGET_EXCEEDED


async def test_the_transport_may_end_the_turn_between_two_steps() -> None:
    script = Script(stop_after=1)
    finish = await carry_out([ASK], script)
    assert script.done == ["model"]
    assert finish.error == "stopped between steps"


async def test_a_finish_already_queued_ends_the_turn_without_any_effect() -> None:
    script = Script()
    assert await carry_out([DONE], script) is DONE
    assert script.done == []
