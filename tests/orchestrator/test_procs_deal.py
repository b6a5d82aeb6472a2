"""How a fan-out in processes deals its items: the parent runs its own share while a worker
process starts, and the share of one that was lost; never more than the run's concurrency is
out in all the processes together.

The worker process here is the parent's record of one that has not started (no process is
spawned): the deal is tested alone, the processes in `test_fanout_processes.py`.
"""

from __future__ import annotations

from collections import deque

import anyio
import pytest

from corral.agents import BudgetConfig, CorralConfig, ItemRecord, RunnerHooks
from corral.orchestrator._procs import ProcessRun, SharedBudget
from corral.orchestrator._procs._budget import BudgetDesk
from corral.orchestrator._procs._deal import Deal, LocalWorker
from corral.orchestrator._procs._parent import _WorkerProcess
from corral.orchestrator._ratelimit import RateLimiterRegistry

pytestmark = pytest.mark.anyio

WAIT = 10.0
RUN = "run-deal"
CONCURRENCY = 4
SHARE = CONCURRENCY // 2


class Items:
    """The parent's own items: each runs until the test lets it end."""

    def __init__(self) -> None:
        self.running: dict[int, anyio.Event] = {}
        self.changed = anyio.Event()

    async def run_one(self, record: ItemRecord) -> None:
        self.running[record.index] = end = anyio.Event()
        self._changed()
        await end.wait()
        del self.running[record.index]
        self._changed()

    def _changed(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def until(self, count: int) -> None:
        with anyio.fail_after(WAIT):
            while len(self.running) != count:
                await self.changed.wait()

    async def end(self, index: int) -> None:
        self.running[index].set()
        with anyio.fail_after(WAIT):
            while index in self.running:
                await self.changed.wait()


def deal_of(items: int, local: Items) -> tuple[Deal, _WorkerProcess]:
    budget = SharedBudget(BudgetConfig())
    run = ProcessRun(
        run_id=RUN,
        config=CorralConfig(),
        processes=2,
        concurrency=CONCURRENCY,
        limiters=RateLimiterRegistry(),
        budget=budget,
        hooks=RunnerHooks(),
        local=local.run_one,
    )
    records = [(ItemRecord(run_id=RUN, index=i, input={}), None) for i in range(items)]
    deal = Deal(deque(records), items, CONCURRENCY)
    worker = _WorkerProcess(0, run, deal, SHARE, BudgetDesk(budget, {}))
    deal.workers.append(worker)
    deal.local = LocalWorker(local.run_one, deal, SHARE)
    return deal, worker


async def test_the_parent_runs_its_share_while_its_worker_process_starts() -> None:
    local = Items()
    deal, worker = deal_of(10, local)
    assert deal.local is not None
    async with anyio.create_task_group() as tg:
        tg.start_soon(deal.local.run)
        await local.until(SHARE)
        assert (deal.out, deal.local.in_flight, worker.in_flight) == (SHARE, SHARE, 0)
        worker.ready = True
        deal.deal_more()  # as the worker's `ready` does
        assert (deal.out, worker.in_flight) == (CONCURRENCY, SHARE)
        tg.cancel_scope.cancel()


async def test_a_freed_slot_goes_to_whichever_process_has_room_never_past_the_concurrency() -> None:
    local = Items()
    deal, worker = deal_of(10, local)
    assert deal.local is not None
    worker.ready = True
    async with anyio.create_task_group() as tg:
        tg.start_soon(deal.local.run)
        await local.until(SHARE)
        deal.deal_more()
        assert (deal.out, worker.in_flight) == (CONCURRENCY, SHARE)
        await local.end(sorted(local.running)[0])
        assert (deal.out, deal.local.in_flight, worker.in_flight) == (CONCURRENCY, SHARE, SHARE)
        tg.cancel_scope.cancel()


async def test_the_parent_takes_back_the_share_of_a_worker_process_that_stopped() -> None:
    local = Items()
    deal, worker = deal_of(10, local)
    assert deal.local is not None
    worker.ready = True
    async with anyio.create_task_group() as tg:
        tg.start_soon(deal.local.run)
        await local.until(SHARE)
        deal.deal_more()  # as the worker's `ready` does
        assert (worker.in_flight, deal.out) == (SHARE, CONCURRENCY)
        worker.stopping = True  # lost: its items go back to the queue when it is reaped
        deal.hand_back([], worker.in_flight)
        await local.until(CONCURRENCY)
        assert deal.out == CONCURRENCY
        tg.cancel_scope.cancel()
