"""Running the tool calls of one model response: parallel where safe, in call order.

This is Codex's read/write-lock model made deterministic: consecutive parallel-safe calls share
the turn (the read side), a call that is not parallel-safe runs alone (the write side). Results
come back in the order the model made the calls. Optional callbacks see each call start and end,
which is where a driver journals them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio
import anyio.lowlevel

from ._registry import ToolCall, ToolContext, ToolOutput, ToolRegistry
from ._user_hooks import dispatch_with_hooks

CallStarted = Callable[[ToolCall], Awaitable[None]]
CallEnded = Callable[[ToolCall, ToolOutput], Awaitable[None]]


async def run_tool_calls(
    registry: ToolRegistry,
    calls: Sequence[ToolCall],
    ctx: ToolContext,
    *,
    on_start: CallStarted | None = None,
    on_result: CallEnded | None = None,
) -> list[ToolOutput]:
    """Run `calls` and return their outputs in call order."""
    results: list[ToolOutput | None] = [None] * len(calls)

    async def run_one(index: int) -> None:
        call = calls[index]
        if on_start is not None:
            await on_start(call)
        output = await dispatch_with_hooks(registry, call, ctx)
        results[index] = output
        if on_result is not None:
            await on_result(call, output)

    for batch in _batches(registry, calls):
        if len(batch) == 1:
            await _run_alone(run_one, batch[0])
            continue
        async with anyio.create_task_group() as tg:
            for index in batch:
                tg.start_soon(run_one, index)
    return [r if r is not None else ToolOutput.error("tool produced no output") for r in results]


async def _run_alone(run_one: Callable[[int], Awaitable[None]], index: int) -> None:
    """A batch of one call, without a task group and its task: most turns make one call.

    What a task group did is kept: the call starts only after the loop has run whatever was
    ready (a task's first step waits for the loop), so a background summary that finished
    meanwhile still reaches the agent before the call's result, and what the call raises comes
    out as the group's one-member `ExceptionGroup`."""
    await anyio.lowlevel.checkpoint()
    try:
        await run_one(index)
    except Exception as exc:
        raise ExceptionGroup("unhandled errors in a TaskGroup", [exc]) from None


def first_batch(registry: ToolRegistry, calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The calls `run_tool_calls` starts at once, before any of the others."""
    batches = _batches(registry, calls)
    return [calls[index] for index in batches[0]] if batches else []


def _batches(registry: ToolRegistry, calls: Sequence[ToolCall]) -> list[list[int]]:
    batches: list[list[int]] = []
    shared: list[int] = []
    for index, call in enumerate(calls):
        tool = registry.get(call.name)
        if tool is None or tool.parallel:
            shared.append(index)
            continue
        if shared:
            batches.append(shared)
            shared = []
        batches.append([index])
    if shared:
        batches.append(shared)
    return batches
