"""The two workflows: a fan-out run, and one item's worker agent as its child.

`FanoutWorkflow` journals the run and its items (an activity), runs at most `concurrency` item
workflows at once, and reads the outcome back from the journal; when every item is done, memory
extracts what the workers learned, once, on a host they ran on. `ItemWorkflow` claims a host (the
worker that picks up `corral.claim_host` from the shared queue), drives the item's agent with its
tools pinned to that host, and when the host dies starts the item again, from its beginning, on
whichever host claims it next. A long history continues as new, carrying the agent over
(`AgentCarry`; its core is rebuilt from the journal).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from corral.agents import AgentStatus

    from ._agent_workflow import REMEMBER_PATCH
    from ._approvals import ApprovalBook, ApprovalHandlers
    from ._budgets import RUN_CHARGE_SIGNAL, RUN_VERDICT_SIGNAL, RunBook, RunLink
    from ._drive import AgentDriver, ContinueAsNewSuggested, HostLost
    from ._lifecycle_flow import fire_finish_hooks
    from ._wire import (
        ActivityPolicy,
        AgentCarry,
        FanoutRunInput,
        FinishInput,
        HostLostInput,
        ItemInput,
        ItemResult,
        PrepareInput,
        RememberFanoutInput,
        RunCharge,
        RunOutput,
        RunVerdict,
        SkippedItems,
        WireSpec,
        host_queue,
    )


def _journal_options(policy: ActivityPolicy) -> dict[str, Any]:
    return {
        "start_to_close_timeout": timedelta(seconds=policy.journal_timeout_s),
        "retry_policy": RetryPolicy(maximum_attempts=policy.journal_attempts),
    }


@workflow.defn(name="corral.ItemWorkflow")
class ItemWorkflow(ApprovalHandlers):
    """One fan-out item: its worker agent, restarted on another host if its host dies."""

    def __init__(self) -> None:
        self.book = ApprovalBook()
        self.run_link: RunLink | None = None

    @workflow.signal(name=RUN_VERDICT_SIGNAL)
    def run_verdict(self, verdict: RunVerdict) -> None:
        if self.run_link is not None:
            self.run_link.heard(verdict)

    @workflow.run
    async def run(self, item: ItemInput) -> ItemResult:
        if item.run_terms is not None:
            self.run_link = RunLink(item.run_id, item.run_terms)
        restarts = item.carry.restarts if item.carry is not None else 0
        carry = item.carry
        while True:
            driver, host = await self._driver(item, carry)
            try:
                if carry is not None:
                    actions = await driver.resume(carry)
                else:
                    prepare = PrepareInput(
                        item=item, agent_id=driver.agent_id, host=host_queue(host)
                    )
                    actions = await driver.prepare("corral.prepare_agent", prepare)
                finish = await driver.drive(actions)
            except ContinueAsNewSuggested:
                await workflow.wait_condition(workflow.all_handlers_finished)
                following = item.model_copy(update={"carry": driver.carry(host, restarts)})
                workflow.continue_as_new(following)
            except HostLost as lost:
                carry = None
                restarts += 1
                await self._host_lost(item, driver, host, str(lost))
                if restarts <= item.policy.max_host_restarts:
                    continue
                error = f"item given up after its host stopped answering {restarts} times"
                return await self._finish(item, driver, restarts, AgentStatus.FAILED, None, error)
            await fire_finish_hooks(driver, finish)
            return await self._finish(
                item, driver, restarts, finish.status, finish.message, finish.error
            )

    async def _driver(self, item: ItemInput, carry: AgentCarry | None) -> tuple[AgentDriver, str]:
        """A driver for the item's agent: the one carried over, or a new one on a host that
        claims it now."""
        if carry is not None:
            host, agent_id = carry.host, carry.agent_id
        else:
            host = await workflow.execute_activity(
                "corral.claim_host", result_type=str, **_journal_options(item.policy)
            )
            agent_id = f"agent-{workflow.uuid4().hex[:12]}"
        shared = workflow.info().task_queue
        driver = AgentDriver(agent_id, item.policy, host_queue(host), shared, self.book)
        driver.may_continue_as_new = lambda: True
        driver.run = self.run_link
        return driver, host

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
    """A fan-out run: one `ItemWorkflow` per unfinished item, `concurrency` at a time; once
    the run's budget is spent, the items not started fail without starting."""

    def __init__(self) -> None:
        self.charges: list[RunCharge] = []

    @workflow.signal(name=RUN_CHARGE_SIGNAL)
    def run_charge(self, charge: RunCharge) -> None:
        self.charges.append(charge)

    @workflow.run
    async def run(self, run: FanoutRunInput) -> RunOutput:
        options = _journal_options(run.policy)
        todo: list[int] = await workflow.execute_activity(
            "corral.begin_run", run, result_type=list[int], **options
        )
        book = RunBook(run.run_limits, self.charges)
        serving = asyncio.create_task(book.serve()) if run.run_limits.counted else None
        skipped: dict[int, str] = {}
        gate = asyncio.Semaphore(run.concurrency)
        try:
            found = await asyncio.gather(
                *(self._item(run, index, gate, book, skipped) for index in todo)
            )
        finally:
            if serving is not None:
                serving.cancel()
        if skipped:
            failed = SkippedItems(run_id=run.run_id, errors=skipped)
            await workflow.execute_activity("corral.fail_items", failed, **options)
        records: list[dict[str, Any]] = await workflow.execute_activity(
            "corral.finish_run", run.run_id, result_type=list[dict[str, Any]], **options
        )
        results = tuple(result for result in found if result is not None)
        # Histories recorded before fan-outs on Temporal extracted memories replay without it.
        done = bool(records) and all(record.get("status") == "done" for record in records)
        if workflow.patched(REMEMBER_PATCH) and done:
            await _remember(run, results)
        return RunOutput(run_id=run.run_id, records=tuple(records), items=results)

    async def _item(
        self,
        run: FanoutRunInput,
        index: int,
        gate: asyncio.Semaphore,
        book: RunBook,
        skipped: dict[int, str],
    ) -> ItemResult | None:
        item = ItemInput(
            run_id=run.run_id,
            index=index,
            data=run.items[index],
            template=str(run.settings["template"]),
            worker=WireSpec.model_validate(run.settings["worker"]),
            policy=run.policy,
            run_terms=book.terms,
        )
        async with gate:
            exhausted = book.exhausted()
            if exhausted is not None:
                # Starting it would only spend one more model request to learn the same.
                skipped[index] = exhausted
                return None
            result: ItemResult = await workflow.execute_child_workflow(
                ItemWorkflow.run, item, id=f"{run.run_id}.item-{index}"
            )
        return result


async def _remember(run: FanoutRunInput, results: tuple[ItemResult, ...]) -> None:
    """Memory's extraction for a fan-out whose every item is done, once, on a host its workers
    ran on (where their folder is); the run's result stands whatever becomes of it."""
    hosts = [host for result in results for host in result.tool_hosts]
    if not hosts:
        return
    worker = WireSpec.model_validate(run.settings["worker"])
    remember = RememberFanoutInput(
        run_id=run.run_id, worker=worker, template=str(run.settings["template"])
    )
    policy = run.policy
    try:
        await workflow.execute_activity(
            "corral.remember_fanout",
            remember,
            task_queue=host_queue(hosts[-1]),
            start_to_close_timeout=timedelta(seconds=policy.model_timeout_s),
            schedule_to_start_timeout=timedelta(seconds=policy.host_start_s),
            heartbeat_timeout=timedelta(seconds=policy.heartbeat_s),
            retry_policy=RetryPolicy(maximum_attempts=1),
        )
    except ActivityError as exc:
        workflow.logger.warning("run %s: memory extraction did not run: %s", run.run_id, exc)
