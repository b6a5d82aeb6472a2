"""Resuming a run of one task (`corral resume`): every agent rebuilt from the journal.

Resume rebuilds every agent of the run from the journal, parents before children, and carries
on what each had not finished.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from corral.agents import (
    AgentRecord,
    AgentSpec,
    AgentStatus,
    CorralConfig,
    Store,
    open_store,
)
from corral.tools import InvalidInput

from .._run import CLOSED, AgentHandle, Restoring, RunRuntime
from ._model_switch import ModelSwitch
from ._setup import RunSetup, open_run
from ._single import SingleOutcome, finish_of, journal_end, remember_run


class UnknownTarget(InvalidInput):
    """`corral resume` was given an id that names neither a run nor an agent."""


class NotResumable(InvalidInput):
    """`corral resume` was given a run of a kind that cannot be carried on."""


RESUMABLE_KINDS = frozenset({"exec"})
"""Run kinds `resume_single` carries on (fan-outs have their own resume)."""


async def resume_single(
    config: CorralConfig,
    target: str,
    *,
    setup: RunSetup,
    base_url: str | None = None,
    message: str | None = None,
    cwd: Path | None = None,
    model: str | None = None,
) -> SingleOutcome:
    """Rebuild the run of `target` (a run or agent id) from the journal and carry it on.

    With `message`, the root agent gets a follow-up turn (in `cwd` if given: the environment
    diff and a re-read AGENTS.md go with it; the permission profile stays as it started). With
    `model`, every agent of the run that used another model carries on with this one
    (`_model_switch`).
    """
    environ = dict(os.environ if setup.env is None else setup.env)
    if base_url:
        environ["CORRAL_BASE_URL"] = base_url
    async with open_store(config) as lookup:
        run_id = await _find_run(lookup, target)
    async with open_run(config, run_id, setup) as runtime:
        await runtime.store.update_run(run_id, status="running", updated_at=time.time())
        records = await runtime.store.list_agents(run_id)
        follow_up = (message, cwd) if message is not None else None
        handles = await _restore_all(runtime, records, environ, base_url, follow_up, model)
        root = handles[records[0].agent_id]
        await root.ended.wait()
        finish = finish_of(root)
        await journal_end(runtime.store, run_id, finish)
        await remember_run(runtime, root, finish, config.memories.extraction_timeout_sec)
    return SingleOutcome(run_id, root.agent_id, finish, runtime.store.journal)


async def _restore_all(
    runtime: RunRuntime,
    records: list[AgentRecord],
    env: Mapping[str, str],
    base_url: str | None,
    follow_up: tuple[str, Path | None] | None,
    model: str | None = None,
) -> dict[str, AgentHandle]:
    """Restore every agent, parents first; the root (the first) gets the follow-up, if any."""
    handles: dict[str, AgentHandle] = {}
    for index, record in enumerate(records):
        spec, task = journaled_spec(record, env, base_url, runtime.config)
        switch = ModelSwitch.of(spec, model, runtime.config)
        spec = switch.spec if switch is not None else spec
        inbox: list[str] = []
        if index == 0 and follow_up is not None:
            message, cwd = follow_up
            inbox.append(message)
            if cwd is not None:
                spec = spec.model_copy(update={"cwd": cwd})
        parent = handles.get(record.parent_id) if record.parent_id else None
        closed = record.status == CLOSED
        status = AgentStatus.INTERRUPTED if closed else AgentStatus(record.status)
        how = Restoring(inbox=tuple(inbox), closed=closed, launch=False)
        handle = await runtime.restore(spec, task, status, parent=parent, how=how)
        if switch is not None and not closed:
            await switch.tell(handle, task, runtime.store)
        handles[record.agent_id] = handle
    for handle in handles.values():
        runtime.launch(handle)
    return handles


def journaled_spec(
    record: AgentRecord,
    env: Mapping[str, str],
    base_url: str | None = None,
    config: CorralConfig | None = None,
) -> tuple[AgentSpec, str]:
    """The spec and task an agent was started with, the endpoint moved to `base_url` when one
    is given, and the key read from `env` again (it is never journaled), sent only where
    `config` (loaded now, by the user) points."""
    data = dict(record.config)
    task = str(data.pop("task", ""))
    return AgentSpec.from_journal(data, env=env, config=config, base_url=base_url), task


async def _find_run(store: Store, target: str) -> str:
    agent = await store.get_agent(target)
    if agent is not None:
        return agent.run_id
    run = await store.get_run(target)
    if run is None:
        raise UnknownTarget(
            f"no run or agent named {target!r} in {store.journal}; `corral runs` lists the runs"
        )
    if run.kind not in RESUMABLE_KINDS:
        raise NotResumable(
            f"run {run.run_id} is a {run.kind} run, which `corral resume` cannot carry on: "
            f"its workers are tied to git worktrees that were removed; start it again"
        )
    if not await store.list_agents(run.run_id):
        raise UnknownTarget(f"run {target} has no agents to resume")
    return run.run_id
