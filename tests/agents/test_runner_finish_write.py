"""How an agent's end reaches its journal row: with the response that ended the turn when there
was one (one write fewer per turn), on its own when something else ended it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from corral.agents import AgentStatus, MemoryStore, RunnerLimits, Usage
from tests.agents.test_runner import (
    AGENT,
    calls_then_answer,
    first_input,
    make_runner,
    tools_with,
)

pytestmark = pytest.mark.anyio


class CountingStore(MemoryStore):
    """The in-memory journal, noting the writes that change the agent's row."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    async def append_events(self, *args: Any, **kwargs: Any) -> Any:
        update = kwargs.get("agent_update") or {}
        self.writes.append("append_events+status" if "status" in update else "append_events")
        return await super().append_events(*args, **kwargs)

    async def update_agent(self, *args: Any, **kwargs: Any) -> None:
        self.writes.append("update_agent")
        await super().update_agent(*args, **kwargs)


async def test_the_response_that_ends_the_turn_records_the_end_in_its_own_write() -> None:
    store = CountingStore()
    runner = await make_runner(calls_then_answer, tools_with(anyio.Event(), anyio.Event()), store)
    store.writes.clear()

    finish = await runner.drive(await runner.feed(first_input()))

    assert finish.status is AgentStatus.COMPLETED
    assert store.writes == ["append_events", "append_events+status"]
    record = await store.get_agent(AGENT)
    assert record is not None
    assert (record.status, record.final_message, record.error) == ("completed", "all done", None)
    assert record.usage == runner.core.total_usage.model_dump()


async def test_an_end_no_response_decided_is_written_on_its_own() -> None:
    def refuse(usage: Usage, cost: float, tool_calls: int) -> str | None:
        return "run budget exceeded"

    store = CountingStore()
    runner = await make_runner(
        calls_then_answer,
        tools_with(anyio.Event(), anyio.Event()),
        store,
        limits=RunnerLimits(shared=refuse),
    )
    store.writes.clear()

    finish = await runner.drive(await runner.feed(first_input()))

    assert finish.status is AgentStatus.BUDGET_EXCEEDED
    assert store.writes[-1] == "update_agent"
    record = await store.get_agent(AGENT)
    assert record is not None
    assert (record.status, record.error) == ("budget_exceeded", "run budget exceeded")


async def test_a_turn_budget_spent_on_a_response_asking_for_tools_records_its_end() -> None:
    store = CountingStore()
    runner = await make_runner(
        calls_then_answer, tools_with(anyio.Event(), anyio.Event()), store, budgets={"max_turns": 1}
    )
    store.writes.clear()

    finish = await runner.drive(await runner.feed(first_input()))

    assert finish.status is AgentStatus.BUDGET_EXCEEDED
    assert store.writes == ["append_events", "update_agent"]
    record = await store.get_agent(AGENT)
    assert record is not None
    assert (record.status, record.error) == ("budget_exceeded", finish.error)
    assert record.usage == runner.core.total_usage.model_dump()
