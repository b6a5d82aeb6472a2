"""What a completed fan-out leaves to memory: its workers' reports and the files they touched.

A fan-out has no root agent whose history says what the run learned, so one is written from the
journal (which also holds what workers of a resumed run or another executor did): each done
worker's tool calls, then its final message and reported result. It goes to the same extraction
as an exec run's (`RunMemory.after_run`), once per run; the extraction bounds and redacts it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from corral.agents import (
    AgentSpec,
    FunctionCall,
    Item,
    ItemRecord,
    Message,
    ModelClient,
    Store,
)

from .._run import RunMemory, RunRuntime
from ._outcome import DONE
from ._report import REPORT_RESULT

MAX_WORKERS = 40
"""The newest done workers whose reports are read; extraction keeps the end of its transcript."""
MAX_CALLS = 10
"""Each worker's first tool calls kept (the files it read or changed are named in them)."""


async def remember_fanout(
    runtime: RunRuntime, prototype: AgentSpec, template: str, deadline: float
) -> None:
    """Once per fan-out run that completed: what its workers learned goes to memory, within
    `deadline` seconds. Memory's own boundary contains its failures."""
    memory = runtime.options.memory
    if memory is None:
        return
    client = runtime.options.clients.client_for(prototype.model)
    workers = Workers(runtime.store, runtime.run_id, prototype, template)
    with anyio.move_on_after(deadline):
        await remember_workers(memory, workers, client)


@dataclass(frozen=True)
class Workers:
    """A fan-out run's workers, as its journal holds them: its id, their spec and task."""

    store: Store
    run_id: str
    prototype: AgentSpec
    template: str


async def remember_workers(memory: RunMemory, workers: Workers, client: ModelClient) -> None:
    """Hand a fan-out whose every item is done to memory's extraction (the local runtime and
    the Temporal activity both come here); one with an item not done is not remembered."""
    items = await workers.store.items(workers.run_id)
    if not items or any(item.status != DONE for item in items):
        return
    done = [item for item in items if item.agent_id is not None][-MAX_WORKERS:]
    if not done:
        return
    history = await workers_history(workers.store, done)
    spec = workers.prototype.model_copy(update={"agent_id": done[-1].agent_id})
    task = f"A fan-out of {len(items)} items; each worker's task was:\n{workers.template}"
    await memory.after_run(spec, task, history, client)


async def workers_history(store: Store, items: Sequence[ItemRecord]) -> list[Item]:
    """The workers' tool calls (but `report_result`), then each one's report, as one history."""
    calls: list[Item] = []
    reports: list[Item] = []
    for item in items:
        assert item.agent_id is not None
        ledger = await store.ledger(item.agent_id)
        used = [e for e in ledger if e.tool != REPORT_RESULT][:MAX_CALLS]
        calls += [FunctionCall(call_id=e.call_id, name=e.tool, arguments=e.arguments) for e in used]
        agent = await store.get_agent(item.agent_id)
        said = agent.final_message if agent is not None and agent.final_message else ""
        result = json.dumps(item.result, ensure_ascii=False)
        reports.append(
            Message(role="assistant", text=f"Worker of item {item.index}: {said}\nResult: {result}")
        )
    return [*calls, *reports]
