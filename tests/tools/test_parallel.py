"""Running one response's tool calls: parallel-safe ones together, the others alone, in order."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel

from corral.tools import (
    PermissionProfile,
    Tool,
    ToolCall,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    run_tool_calls,
)

pytestmark = pytest.mark.anyio


class Label(BaseModel):
    label: str


@dataclass
class Meter:
    """Counts the tools running right now and logs starts and ends."""

    running: int = 0
    seen_by_serial: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)


def call(name: str, label: str) -> ToolCall:
    return ToolCall(call_id=f"{name}-{label}", name=name, arguments=json.dumps({"label": label}))


def context() -> ToolContext:
    return ToolContext(cwd=Path.cwd(), profile=PermissionProfile())


def metered_tools(meter: Meter) -> ToolRegistry:
    async def shared(args: Label, ctx: ToolContext) -> ToolOutput:
        meter.running += 1
        meter.log.append(f"start {args.label}")
        for _ in range(5):  # give every other ready task the chance to run meanwhile
            await anyio.lowlevel.checkpoint()
        meter.running -= 1
        meter.log.append(f"end {args.label}")
        return ToolOutput(args.label)

    async def alone(args: Label, ctx: ToolContext) -> ToolOutput:
        meter.running += 1
        meter.log.append(f"start {args.label}")
        for _ in range(5):
            meter.seen_by_serial.append(meter.running)
            await anyio.lowlevel.checkpoint()
        meter.running -= 1
        meter.log.append(f"end {args.label}")
        return ToolOutput(args.label)

    return ToolRegistry(
        [
            Tool("shared", "parallel-safe", Label, shared, parallel=True),
            Tool("alone", "must run alone", Label, alone, mutating=True, parallel=False),
        ]
    )


async def test_parallel_safe_calls_of_one_response_overlap() -> None:
    ready = {"left": anyio.Event(), "right": anyio.Event()}

    async def meet(args: Label, ctx: ToolContext) -> ToolOutput:
        other = "right" if args.label == "left" else "left"
        ready[args.label].set()
        await ready[other].wait()  # only returns if the other call runs at the same time
        return ToolOutput(f"{args.label} met {other}")

    registry = ToolRegistry([Tool("meet", "waits for its twin", Label, meet, parallel=True)])
    with anyio.fail_after(5):
        outputs = await run_tool_calls(
            registry, [call("meet", "left"), call("meet", "right")], context()
        )
    assert [o.text for o in outputs] == ["left met right", "right met left"]


async def test_a_tool_that_is_not_parallel_safe_runs_alone() -> None:
    meter = Meter()
    calls = [
        call("shared", "s1"),
        call("shared", "s2"),
        call("alone", "a"),
        call("shared", "s3"),
        call("shared", "s4"),
    ]
    with anyio.fail_after(5):
        await run_tool_calls(metered_tools(meter), calls, context())
    assert set(meter.seen_by_serial) == {1}
    assert meter.log[:2] == ["start s1", "start s2"]  # the parallel-safe ones did overlap
    start, end = meter.log.index("start a"), meter.log.index("end a")
    assert end == start + 1
    assert sorted(meter.log[:start]) == ["end s1", "end s2", "start s1", "start s2"]
    assert meter.log[start + 1 :].count("start s3") == 1


async def test_results_come_back_in_call_order_whatever_order_they_finish_in() -> None:
    second_done = anyio.Event()

    async def slow_first(args: Label, ctx: ToolContext) -> ToolOutput:
        if args.label == "first":
            await second_done.wait()
        else:
            second_done.set()
        return ToolOutput(args.label)

    registry = ToolRegistry([Tool("job", "job", Label, slow_first, parallel=True)])
    with anyio.fail_after(5):
        outputs = await run_tool_calls(
            registry, [call("job", "first"), call("job", "second")], context()
        )
    assert [o.text for o in outputs] == ["first", "second"]


async def test_unknown_tool_in_the_middle_gets_an_error_in_its_own_slot() -> None:
    meter = Meter()
    calls = [call("shared", "before"), call("missing", "x"), call("shared", "after")]
    with anyio.fail_after(5):
        outputs = await run_tool_calls(metered_tools(meter), calls, context())
    assert [o.text for o in outputs[::2]] == ["before", "after"]
    assert not outputs[1].success
    assert outputs[1].text == "unknown tool 'missing'; available tools: shared, alone"
