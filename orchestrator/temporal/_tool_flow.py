"""Workflow code that runs an agent's tool batches on its host and waits for the answers to the
calls a batch held for approval.

`run_tool_batch` sends one batch with the journal's pending events and the answers so far, and
remembers the host that ran it; `answer_asks` journals each ask, waits for its answer (the
`approve` update, `_approvals`) or its deadline's durable timer, and journals the outcome. Which
calls run again, and feeding the results to the core, stay the driver's (`_drive`).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import TYPE_CHECKING

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic import TypeAdapter

    from corral.agents import FunctionCall

    from ._approvals import answered_note, requested_note
    from ._wire import ApprovalAnswer, ApprovalAsk, ToolBatchInput, ToolBatchOutput

if TYPE_CHECKING:
    from ._drive import AgentDriver

_CALL = TypeAdapter(FunctionCall)


async def run_tool_batch(
    driver: AgentDriver, calls: list[FunctionCall], answers: tuple[ApprovalAnswer, ...]
) -> ToolBatchOutput:
    """Run `calls` on the agent's host, with the answers to the asks of earlier batches."""
    batch = ToolBatchInput(
        spec=driver.spec,
        calls=tuple(_CALL.dump_python(c, mode="json") for c in calls),
        journal=driver.take_journal(),
        answers=answers,
    )
    timeout = timedelta(seconds=driver.policy.tool_timeout_s)
    out: ToolBatchOutput = await driver.on_host("corral.run_tools", batch, ToolBatchOutput, timeout)
    if out.host not in driver.tool_hosts:
        driver.tool_hosts.append(out.host)
    return out


async def answer_asks(driver: AgentDriver, asks: tuple[ApprovalAsk, ...]) -> list[ApprovalAnswer]:
    """Wait for each ask's answer (the `approve` update) or its deadline, a durable timer."""
    if not asks:
        return []
    within = driver.spec.shell.approval_timeout_sec
    driver.approvals.open(asks)
    me = workflow.info().workflow_id
    for ask in asks:
        driver.note(requested_note(ask, me, within))
    await driver.flush()
    answers = await asyncio.gather(*(_answer_of(driver, ask, within) for ask in asks))
    for answer in answers:
        driver.note(answered_note(answer))
    return list(answers)


async def _answer_of(driver: AgentDriver, ask: ApprovalAsk, within: float) -> ApprovalAnswer:
    book = driver.approvals
    try:
        await workflow.wait_condition(lambda: ask.approval_id in book.answers, timeout=within)
    except TimeoutError:
        return book.answer(ask.approval_id, False, f"no answer within {within:g} s", "deadline")
    return book.answers[ask.approval_id]
