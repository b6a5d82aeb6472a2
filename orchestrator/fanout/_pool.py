"""The workers of a fan-out: at most `concurrency` at once, one per unfinished item.

A worker's agent is named after its item (`item 7`), so a resumed run finds each item's agent
in the journal even if it stopped before the item pointed at it. An item whose agent had begun
is restored by replay (its journaled tool calls are not run again); one whose agent never got its
task is started afresh. When a worker ends, its item becomes `done` (a valid result was reported)
or `failed` with the reason; a worker cancelled with the run leaves its item to be resumed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from corral.agents import AgentRecord, AgentSpec, AgentStatus, ItemRecord, ModelPrice, Store
from corral.tools import Tool

from .._run import AgentHandle, RunRuntime, ToolScope, cost_of
from ..runs import journaled_spec, new_id
from ._items import FanoutItem
from ._outcome import DONE, FAILED, FINAL_STATUSES, RUNNING, usage_json
from ._plan import item_of, worker_spec
from ._report import ResultSlot, report_result_tool
from ._schema import ResultSchema
from ._template import Template


class SlotBook:
    """The result slot of every worker, by agent id; its `provide` is the run's tool provider."""

    def __init__(self, schema: ResultSchema, max_tries: int) -> None:
        self.schema = schema
        self.max_tries = max_tries
        self._slots: dict[str, ResultSlot] = {}

    def open(self, agent_id: str, index: int) -> ResultSlot:
        slot = ResultSlot(index=index, schema=self.schema, max_tries=self.max_tries)
        self._slots[agent_id] = slot
        return slot

    def provide(self, scope: ToolScope) -> Tool[Any]:
        return report_result_tool(self._slots[scope.agent_id])


@dataclass
class WorkerPool:
    """Runs the unfinished items of one fan-out run in `runtime`."""

    runtime: RunRuntime
    book: SlotBook
    template: Template
    prototype: AgentSpec
    price: ModelPrice | None
    env: Mapping[str, str]
    base_url: str | None = None
    owners: dict[int, AgentRecord] = field(default_factory=dict)
    """Each item's latest agent, found in the journal when a run is resumed."""
    on_queue_wait: Callable[[float], None] | None = None
    """Told how many seconds each item waited for a worker to take it."""

    @property
    def store(self) -> Store:
        return self.runtime.store

    async def run(self, records: list[ItemRecord], concurrency: int) -> None:
        """Carry every unfinished item in `records` to `done` or `failed`."""
        todo = [record for record in records if record.status not in FINAL_STATUSES]
        queue = iter(todo)
        queued_at = time.monotonic()
        async with anyio.create_task_group() as tg:
            for _ in range(min(concurrency, len(todo))):
                tg.start_soon(self._work, queue, queued_at)

    async def _work(self, queue: Iterator[ItemRecord], queued_at: float) -> None:
        for record in queue:
            if self.on_queue_wait is not None:
                self.on_queue_wait(time.monotonic() - queued_at)
            await self.run_one(record)

    async def run_one(self, record: ItemRecord) -> None:
        """Carry one unfinished item to `done` or `failed` (a worker process's unit of work)."""
        exhausted = self.runtime.budget.exhausted
        if exhausted is not None and record.agent_id is None:
            # Starting it would only spend one more model request to learn the same.
            await self.store.update_item(
                self.runtime.run_id, record.index, status=FAILED, error=exhausted
            )
            return
        await self._run_item(record)

    async def _run_item(self, record: ItemRecord) -> None:
        restored = await self._restore(record)
        handle, slot = restored if restored is not None else await self._start(record)
        await handle.ended.wait()
        usage = handle.runner.core.total_usage
        fields: dict[str, Any] = {
            "usage": usage_json(usage),
            "cost_usd": cost_of(usage, self.price),
        }
        if slot.has_result:
            fields.update(status=DONE, result=slot.result, error=None)
        else:
            fields.update(status=FAILED, error=slot.failure(str(handle.status), handle.error))
        await self.store.update_item(self.runtime.run_id, record.index, **fields)
        ended = {"index": record.index, "status": fields["status"], "error": fields["error"]}
        await self.runtime.note(handle.agent_id, "item_finished", ended)

    async def _start(self, record: ItemRecord) -> tuple[AgentHandle, ResultSlot]:
        agent_id = new_id("agent")
        slot = self.book.open(agent_id, record.index)
        spec = worker_spec(self.prototype, agent_id, record.index)
        task = self.template.fill(FanoutItem(record.index, record.index + 1, record.input))
        # The item's note goes with the agent's row: noted afterwards, it raced the agent's
        # first turn, and the journal's order of a run depended on the machine's timing.
        started = ("item_started", {"index": record.index})
        handle = await self.runtime.start(spec, task, stay_open=False, notes=[started])
        await self.store.update_item(
            self.runtime.run_id, record.index, status=RUNNING, agent_id=agent_id
        )
        return handle, slot

    async def _restore(self, record: ItemRecord) -> tuple[AgentHandle, ResultSlot] | None:
        """The item's agent carried on by replay (or started on its task, if it was journaled
        but stopped before the task began), or None if the item has no agent yet."""
        agent = self.owners.get(record.index)
        if agent is None:
            return None
        spec, task = journaled_spec(agent, self.env, self.base_url, self.runtime.config)
        slot = self.book.open(agent.agent_id, record.index)
        slot.replay(await self.store.ledger(agent.agent_id))
        status = AgentStatus(agent.status)
        handle = await self.runtime.restore(spec, task, status, stay_open=False)
        if record.agent_id != agent.agent_id:
            await self.store.update_item(
                self.runtime.run_id, record.index, status=RUNNING, agent_id=agent.agent_id
            )
        return handle, slot


def item_owners(agents: Iterable[AgentRecord]) -> dict[int, AgentRecord]:
    """Each item's latest agent, from a run's agents (oldest first)."""
    owners: dict[int, AgentRecord] = {}
    for agent in agents:
        index = item_of(agent.nickname)
        if index is not None:
            owners[index] = agent
    return owners
