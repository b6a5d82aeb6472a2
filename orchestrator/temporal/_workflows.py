"""The two workflows: a fan-out run, and one item's worker agent as its child.

`FanoutWorkflow` journals the run and its items (an activity), runs at most `concurrency` item
workflows at once, and reads the outcome back from the journal. `ItemWorkflow` claims a host (the
worker that picks up `corral.claim_host` from the shared queue), drives the item's agent with its
tools pinned to that host, and when the host dies starts the item again, from its beginning, on
whichever host claims it next.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from agents import AgentStatus

    from ._drive import AgentDriver, HostLost
    from ._wire import (
        ActivityPolicy,
        FanoutRunInput,
        FinishInput,
        HostLostInput,
        ItemInput,
        ItemResult,
        RunOutput,
        host_queue,
    )


def _journal_options(policy: ActivityPolicy) -> dict[str, Any]:
    return {
        "start_to_close_timeout": timedelta(seconds=policy.journal_timeout_s),
        "retry_policy": RetryPolicy(maximum_attempts=policy.journal_attempts),
    }


@workflow.defn(name="corral.ItemWorkflow")
class ItemWorkflow:
    """One fan-out item: its worker agent, restarted on another host if its host dies."""

    @workflow.run
    async def run(self, item: ItemInput) -> ItemResult:
        restarts = 0
        while True:
            host = await workflow.execute_activity(
                "corral.claim_host", result_type=str, **_journal_options(item.policy)
            )
            agent_id = f"agent-{workflow.uuid4().hex[:12]}"
            shared = workflow.info().task_queue
            driver = AgentDriver(item, agent_id, host_queue(host), shared)
            try:
                finish = await driver.run()
            except HostLost as lost:
                restarts += 1
                await self._host_lost(item, driver, host, str(lost))
                if restarts <= item.policy.max_host_restarts:
                    continue
                error = f"item given up after its host stopped answering {restarts} times"
                return await self._finish(item, driver, restarts, AgentStatus.FAILED, None, error)
            return await self._finish(
                item, driver, restarts, finish.status, finish.message, finish.error
            )

    async def _host_lost(self, item: ItemInput, driver: AgentDriver, host: str, why: str) -> None:
        lost = HostLostInput(
            run_id=item.run_id, index=item.index, agent_id=driver.agent_id, host=host, reason=why
        )
        await workflow.execute_activity("corral.host_lost", lost, **_journal_options(item.policy))

    async def _finish(
        self,
        item: ItemInput,
        driver: AgentDriver,
        restarts: int,
        status: str,
        message: str | None,
        error: str | None,
    ) -> ItemResult:
        core = driver.core
        usage = core.total_usage.model_dump(mode="json") if core is not None else {}
        finish = FinishInput(
            run_id=item.run_id,
            index=item.index,
            agent_id=driver.agent_id,
            status=str(status),
            message=message,
            error=error,
            usage=usage,
            cost_usd=driver.cost,
            journal=driver.take_journal(),
        )
        outcome = await workflow.execute_activity(
            "corral.finish_item",
            finish,
            result_type=str,
            **_journal_options(item.policy),
        )
        return ItemResult(
            index=item.index,
            status=outcome,
            agent_id=driver.agent_id,
            tool_hosts=tuple(driver.tool_hosts),
            restarts=restarts,
        )


@workflow.defn(name="corral.FanoutWorkflow")
class FanoutWorkflow:
    """A fan-out run: one `ItemWorkflow` per unfinished item, `concurrency` at a time."""

    @workflow.run
    async def run(self, run: FanoutRunInput) -> RunOutput:
        options = _journal_options(run.policy)
        todo: list[int] = await workflow.execute_activity(
            "corral.begin_run", run, result_type=list[int], **options
        )
        gate = asyncio.Semaphore(run.concurrency)
        results = await asyncio.gather(*(self._item(run, index, gate) for index in todo))
        records: list[dict[str, Any]] = await workflow.execute_activity(
            "corral.finish_run", run.run_id, result_type=list[dict[str, Any]], **options
        )
        return RunOutput(run_id=run.run_id, records=tuple(records), items=tuple(results))

    async def _item(self, run: FanoutRunInput, index: int, gate: asyncio.Semaphore) -> ItemResult:
        item = ItemInput(
            run_id=run.run_id,
            index=index,
            data=run.items[index],
            template=str(run.settings["template"]),
            worker=dict(run.settings["worker"]),
            policy=run.policy,
        )
        async with gate:
            result: ItemResult = await workflow.execute_child_workflow(
                ItemWorkflow.run, item, id=f"{run.run_id}.item-{index}"
            )
        return result
