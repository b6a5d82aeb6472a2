"""Runs started from one task (`corral exec`): the root agent, journaled, waited on to its end.

A run's agents live in a `RunRuntime`: the root agent here, and whatever it spawns when its
tools include the supervisor's.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import anyio

from corral.agents import AgentStatus, CorralConfig, Finish, RunRecord, Store

from .._run import AgentHandle, RunRuntime
from ._jobs import ExecJob
from ._setup import RunSetup, build_root_spec, new_id, open_run, with_skills

CLEANUP_TIMEOUT = 10.0
INTERRUPTED = str(AgentStatus.INTERRUPTED)


@dataclass(frozen=True)
class SingleOutcome:
    run_id: str
    agent_id: str
    finish: Finish
    journal: str
    """The journal the run was written to: its SQLite file, or its PostgreSQL URL with the
    password shown as `***` (`Store.journal`)."""


async def run_single_agent(config: CorralConfig, job: ExecJob, setup: RunSetup) -> SingleOutcome:
    """Start a run whose root agent works on `job.task`, and wait until the whole run is done."""
    environ = os.environ if setup.env is None else setup.env
    run_id = job.run_id or new_id("run")
    setup = await with_skills(setup, config, job.cwd)
    spec = build_root_spec(
        config,
        cwd=job.cwd,
        env=environ,
        run_id=run_id,
        role=job.role,
        extra_tools=tuple(setup.tool_providers),
    )
    async with open_run(config, run_id, setup) as runtime:
        await _journal_run(runtime.store, job.model_copy(update={"run_id": run_id}))
        try:
            root = await runtime.start(spec, job.task)
            await root.ended.wait()
        except anyio.get_cancelled_exc_class():  # the run was cancelled: it ends here, as so
            with anyio.move_on_after(CLEANUP_TIMEOUT, shield=True):
                await runtime.store.update_run(run_id, status=INTERRUPTED, updated_at=time.time())
            raise
        finish = finish_of(root)
        await journal_end(runtime.store, run_id, finish)
        await remember_run(runtime, root, finish, config.memories.extraction_timeout_sec)
    return SingleOutcome(run_id, spec.agent_id, finish, runtime.store.journal)


async def remember_run(
    runtime: RunRuntime, root: AgentHandle, finish: Finish, deadline: float
) -> None:
    """Once per run, after its end is journaled: what a completed run learned goes to memory,
    within `deadline` seconds (past it the run's result is given without its memories)."""
    memory = runtime.options.memory
    if memory is None or finish.status is not AgentStatus.COMPLETED:
        return
    client = runtime.options.clients.client_for(root.spec.model)
    with anyio.move_on_after(deadline):
        await memory.after_run(root.spec, root.task, root.runner.core.history, client)


def finish_of(root: AgentHandle) -> Finish:
    return Finish(status=root.status, message=root.final_message, error=root.error)


async def _journal_run(store: Store, job: ExecJob) -> None:
    """The run's record; its config is the job it carries out."""
    now = time.time()
    await store.create_run(
        RunRecord(
            run_id=str(job.run_id),
            kind=job.kind,
            status="running",
            created_at=now,
            updated_at=now,
            config=job.model_dump(mode="json"),
        )
    )


async def journal_end(store: Store, run_id: str, finish: Finish) -> None:
    await store.update_run(run_id, status=str(finish.status), updated_at=time.time())
