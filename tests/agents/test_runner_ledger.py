"""The side-effect ledger as the runner writes it: each call entered before it runs, the calls a
response starts at once entered in the same journal write as that response."""

from __future__ import annotations

from typing import Any

import pytest

from corral.agents import (
    AgentStatus,
    FunctionCallOutput,
    MemoryStore,
    Message,
    ModelRequest,
    RunnerLimits,
    Usage,
)
from corral.tools import Tool, ToolContext, ToolOutput, ToolRegistry
from tests.agents.test_runner import AGENT, NoArgs, call, first_input, make_runner

pytestmark = pytest.mark.anyio


class CountingStore(MemoryStore):
    """The in-memory journal, counting the writes that reach it."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    async def append_events(self, *args: Any, **kwargs: Any) -> Any:
        self.writes.append("append_events")
        return await super().append_events(*args, **kwargs)

    async def ledger_start(self, *args: Any, **kwargs: Any) -> Any:
        self.writes.append("ledger_start")
        return await super().ledger_start(*args, **kwargs)


def registry_seeing(store: MemoryStore, seen: list[tuple[str, list[str]]]) -> ToolRegistry:
    """Tools that note, as they run, which calls the ledger holds as started."""

    def tool(name: str, *, parallel: bool) -> Tool[NoArgs]:
        async def handler(args: NoArgs, ctx: ToolContext) -> ToolOutput:
            ledger = await store.ledger(AGENT)
            seen.append((name, [e.call_id for e in ledger if e.state == "started"]))
            return ToolOutput(f"{name} done")

        return Tool(name, name, NoArgs, handler, mutating=not parallel, parallel=parallel)

    return ToolRegistry(
        [tool("read", parallel=True), tool("peek", parallel=True), tool("write", parallel=False)]
    )


def asks_for(*calls: tuple[str, str]) -> Any:
    def respond(request: ModelRequest) -> list[Any]:
        if any(isinstance(i, FunctionCallOutput) for i in request.input):
            return [Message(role="assistant", text="done")]
        return [call(name, call_id) for name, call_id in calls]

    return respond


async def test_calls_that_start_together_are_entered_with_the_response_in_one_write() -> None:
    store, seen = CountingStore(), list[tuple[str, list[str]]]()
    respond = asks_for(("read", "c1"), ("peek", "c2"))
    runner = await make_runner(respond, registry_seeing(store, seen), store)
    store.writes.clear()

    finish = await runner.drive(await runner.feed(first_input()))

    assert finish.status is AgentStatus.COMPLETED
    assert sorted(seen) == [("peek", ["c1", "c2"]), ("read", ["c1", "c2"])]
    assert "ledger_start" not in store.writes
    ledger = await store.ledger(AGENT)
    assert [(e.call_id, e.state) for e in ledger] == [("c1", "finished"), ("c2", "finished")]


async def test_a_call_that_waits_for_another_is_entered_only_when_it_starts() -> None:
    store, seen = CountingStore(), list[tuple[str, list[str]]]()
    respond = asks_for(("write", "c1"), ("write", "c2"))
    runner = await make_runner(respond, registry_seeing(store, seen), store)

    finish = await runner.drive(await runner.feed(first_input()))

    assert finish.status is AgentStatus.COMPLETED
    # The second write runs after the first: were the process to die during the first, the
    # second must not look as if it might have run.
    assert seen == [("write", ["c1"]), ("write", ["c2"])]
    assert store.writes.count("ledger_start") == 1


async def test_calls_the_shared_budget_refuses_never_reach_the_ledger() -> None:
    store, seen = CountingStore(), list[tuple[str, list[str]]]()

    def refuse(usage: Usage, cost: float, tool_calls: int) -> str | None:
        return "run budget exceeded"

    respond = asks_for(("read", "c1"))
    runner = await make_runner(
        respond, registry_seeing(store, seen), store, limits=RunnerLimits(shared=refuse)
    )

    finish = await runner.drive(await runner.feed(first_input()))

    assert finish.status is AgentStatus.BUDGET_EXCEEDED
    assert seen == []
    assert await store.ledger(AGENT) == []
