"""The shared `Compactor`: many agents summarise through one limiter, stalled agents are not
starved by background summaries, and a slot that never frees gives a clear error."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from corral.agents import (
    COMPACTION_SUMMARY,
    AgentCore,
    AgentRunner,
    AgentStatus,
    CoreConfig,
    EnvironmentContext,
    FunctionCall,
    Item,
    MemoryStore,
    Message,
    ModelRequest,
    ModelResponse,
    RunRecord,
    TurnContext,
    Usage,
    UserInput,
)
from corral.agents._fragments import SUMMARIZATION_PROMPT
from corral.agents.model import ScriptedModelClient
from corral.orchestrator.services.compaction import (
    CompactionSlotTimeout,
    Compactor,
    CompactorConfigError,
)
from corral.tools import PermissionProfile, Tool, ToolContext, ToolOutput, ToolRegistry
from tests._journal import agent_record

pytestmark = pytest.mark.anyio
AGENTS = 50
CAPACITY = 4
WAIT = 20.0
_TASK = re.compile(r"task (\d+)")


class NoArgs(BaseModel):
    pass


class Fleet:
    """Fifty agents whose tools meet at a barrier, so they all reach compaction together."""

    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor
        self.store = MemoryStore()
        self.tools_started = 0
        self.all_tools_started = anyio.Event()
        self.saturated = anyio.Event()
        self.model = ScriptedModelClient(self.respond)

    async def respond(self, request: ModelRequest) -> ModelResponse:
        number = _TASK.findall(" ".join(i.text for i in request.input if isinstance(i, Message)))
        n = number[0]
        if request.input[-1] == Message(role="user", text=SUMMARIZATION_PROMPT):
            if self.compactor.stats.active == CAPACITY:
                self.saturated.set()
            with anyio.fail_after(WAIT):  # hold the slot until the limiter is full
                await self.saturated.wait()
            return _reply(Message(role="assistant", text=f"summary of task {n}"))
        if any(
            isinstance(i, Message) and COMPACTION_SUMMARY.matches(i.text) for i in request.input
        ):
            return _reply(Message(role="assistant", text=f"finished task {n}"))
        # Even agents pass the early limit (a background summary), odd ones the threshold.
        tokens = 850 if int(n) % 2 == 0 else 950
        return _reply(FunctionCall(call_id=f"w{n}", name="work", arguments="{}"), tokens=tokens)

    async def work(self, args: NoArgs, ctx: ToolContext) -> ToolOutput:
        self.tools_started += 1
        if self.tools_started == AGENTS:
            self.all_tools_started.set()
        with anyio.fail_after(WAIT):
            await self.all_tools_started.wait()
        return ToolOutput("x" * 400)

    async def runner(self, n: int) -> AgentRunner:
        agent_id = f"agent-{n}"
        await self.store.create_agent(agent_record(agent_id))
        config = CoreConfig(agent_id=agent_id, model="m", instructions="i", context_window=1000)
        registry = ToolRegistry([Tool("work", "does the work", NoArgs, self.work)])
        return AgentRunner(
            core=AgentCore(config),
            model=self.model,
            registry=registry,
            tool_context=ToolContext(cwd=Path("/w"), profile=PermissionProfile()),
            store=self.store,
            compaction_gate=self.compactor,
        )


def _reply(*items: Message | FunctionCall, tokens: int = 100) -> ModelResponse:
    return ModelResponse(items=list(items), usage=Usage(input_tokens=tokens, output_tokens=10))


def _task(n: int) -> UserInput:
    env = EnvironmentContext(
        cwd=Path("/w"), shell="bash", current_date="2026-11-29", timezone="Etc/UTC"
    )
    perms = "<permissions instructions>x</permissions instructions>"
    return UserInput(text=f"task {n}", context=TurnContext(environment=env, permissions=perms))


def _summaries(items: Sequence[Item]) -> list[str]:
    return [i.text for i in items if isinstance(i, Message) and COMPACTION_SUMMARY.matches(i.text)]


async def test_fifty_agents_compact_at_once_through_one_limiter_each_with_its_own_summary() -> None:
    compactor = Compactor(max_concurrent=CAPACITY)
    fleet = Fleet(compactor)
    await fleet.store.create_run(
        RunRecord(
            run_id="r", kind="fanout", status="running", created_at=0, updated_at=0, config={}
        )
    )
    runners = [await fleet.runner(n) for n in range(AGENTS)]

    async def drive(n: int) -> None:
        runner = runners[n]
        finish = await runner.drive(await runner.feed(_task(n)))
        assert finish.status is AgentStatus.COMPLETED and finish.message == f"finished task {n}"

    with anyio.fail_after(WAIT * 2):
        async with anyio.create_task_group() as group:
            for n in range(AGENTS):
                group.start_soon(drive, n)

    stats = compactor.stats
    assert stats.high_water == CAPACITY, "the limiter filled up and never overflowed"
    assert stats.foreground_done + stats.background_done == AGENTS
    assert stats.background_done == AGENTS // 2, "the even agents summarised in the background"
    for n, runner in enumerate(runners):
        (summary,) = _summaries(runner.core.history)
        assert f"summary of task {n}\n" in summary

    with anyio.fail_after(WAIT * 2):
        async with anyio.create_task_group() as group:
            for runner in runners:
                group.start_soon(runner.compact_now)
    assert compactor.stats.high_water == CAPACITY
    for n, runner in enumerate(runners):
        last = runner.core.history[-1]
        assert isinstance(last, Message) and f"summary of task {n}\n" in last.text


async def served_order(
    compactor: Compactor, waiters: Sequence[tuple[str, bool]], *, hurry: str | None = None
) -> list[str]:
    """Hold the only slot, queue `waiters` (name, background) behind it in this order, maybe
    hurry one, then release the slot: the order in which they were served."""
    order: list[str] = []
    release = anyio.Event()

    async def summarise(name: str, background: bool) -> None:
        async with compactor.slot(name, background=background):
            order.append(name)
            if name == "holder":
                with anyio.fail_after(WAIT):
                    await release.wait()

    async with anyio.create_task_group() as group:
        for name, background in (("holder", True), *waiters):
            group.start_soon(summarise, name, background)
            await anyio.wait_all_tasks_blocked()
        assert (compactor.stats.active, compactor.stats.waiting) == (1, len(waiters))
        if hurry is not None:
            compactor.hurry(hurry)
        release.set()
    return order


async def test_a_stalled_agent_is_served_before_background_summaries_that_came_first() -> None:
    waiters = [("early-a", True), ("early-b", True), ("stalled", False)]
    order = await served_order(Compactor(max_concurrent=1), waiters)
    assert order == ["holder", "stalled", "early-a", "early-b"]


async def test_a_hurried_background_summary_goes_before_the_other_background_ones() -> None:
    compactor = Compactor(max_concurrent=1)
    order = await served_order(compactor, [("a", True), ("b", True)], hurry="b")
    assert order == ["holder", "b", "a"]
    assert compactor.stats.hurried == 1 and compactor.stats.background_done == 3


async def test_background_summaries_use_every_free_slot() -> None:
    compactor = Compactor(max_concurrent=3)
    release = anyio.Event()

    async def summarise(name: str) -> None:
        async with compactor.slot(name, background=True):
            with anyio.fail_after(WAIT):
                await release.wait()

    async with anyio.create_task_group() as group:
        for n in range(5):
            group.start_soon(summarise, f"agent-{n}")
        await anyio.wait_all_tasks_blocked()
        assert (compactor.stats.active, compactor.stats.waiting) == (3, 2)
        release.set()
    assert compactor.stats.high_water == 3


async def test_a_summary_that_finds_no_slot_in_time_says_what_held_it() -> None:
    compactor = Compactor(max_concurrent=1, wait_timeout=0.05)
    async with compactor.slot("first"):
        with pytest.raises(CompactionSlotTimeout, match="agent second found no compaction slot"):
            async with compactor.slot("second"):
                pass
    assert compactor.stats.active == 0 and compactor.stats.waiting == 0


def test_a_compactor_needs_at_least_one_slot() -> None:
    with pytest.raises(CompactorConfigError, match="at least 1"):
        Compactor(max_concurrent=0)


async def test_summaries_cancelled_while_waiting_or_just_admitted_leak_no_slot() -> None:
    compactor = Compactor(max_concurrent=2)
    release = anyio.Event()
    doomed = {"bg-doomed": anyio.CancelScope(), "doomed": anyio.CancelScope()}
    served: list[str] = []

    async def hold(name: str, victim: str) -> None:
        async with compactor.slot(name):
            with anyio.fail_after(WAIT):
                await release.wait()
        doomed[victim].cancel()  # the slot was just handed to the victim, which has not run yet

    async def summarise(name: str) -> None:
        with doomed.get(name, anyio.CancelScope()):
            async with compactor.slot(name, background=name.startswith("bg")):
                served.append(name)

    async with anyio.create_task_group() as group:
        group.start_soon(hold, "holder-1", "doomed")
        group.start_soon(hold, "holder-2", "bg-doomed")
        await anyio.wait_all_tasks_blocked()
        for name in ("bg-doomed", "doomed", "bg-survivor"):
            group.start_soon(summarise, name)
            await anyio.wait_all_tasks_blocked()
        assert compactor.stats.waiting == 3
        release.set()
    assert "bg-survivor" in served  # a doomed one may still run: anyio lets a woken task go on
    assert (compactor.stats.active, compactor.stats.waiting) == (0, 0)
    with anyio.fail_after(WAIT):
        async with compactor.slot("a"), compactor.slot("b"):
            assert compactor.stats.active == 2
