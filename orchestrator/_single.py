"""Running one agent from start to finish, and resuming one: what `corral exec`, `corral resume`
and `corral demo` share.

It turns a config into an `AgentSpec`, journals the run and the agent, drives the runner, and
records how it ended. Printing is left to the CLI; hooks carry events out as they happen.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio

from agents import (
    AgentRecord,
    AgentRunner,
    AgentSpec,
    CorralConfig,
    Finish,
    RunnerHooks,
    RunnerLimits,
    RunRecord,
    Store,
    UserInput,
    build_core,
    build_registry,
    build_tool_context,
    build_turn_context,
    continue_agent,
    model_settings_from_config,
    open_model_client,
    open_sqlite_store,
    replay_core,
    resolve_base_instructions,
    spec_from_config,
)
from agents.model import ModelClient
from tools import InvalidInput, PermissionProfile, SandboxMode
from tools import core_tool_names as _core_tool_names

JOURNAL_NAME = "journal.sqlite"


class UnknownTarget(InvalidInput):
    """`corral resume` was given an id that names neither a run nor an agent."""


@dataclass(frozen=True)
class SingleOutcome:
    run_id: str
    agent_id: str
    finish: Finish
    journal: Path


def journal_path(config: CorralConfig) -> Path:
    return config.home / JOURNAL_NAME


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def profile_from_config(config: CorralConfig, cwd: Path) -> PermissionProfile:
    mode = SandboxMode(config.sandbox_mode)
    roots = (cwd, *config.writable_roots) if mode is SandboxMode.WORKSPACE_WRITE else ()
    return PermissionProfile(
        sandbox=mode,
        writable_roots=roots,
        network=config.network_access,
        approval=config.approval_policy,
    )


def build_exec_spec(
    config: CorralConfig, *, cwd: Path, env: Mapping[str, str], run_id: str, role: str = "general"
) -> AgentSpec:
    instructions = resolve_base_instructions(
        override=config.base_instructions,
        journaled=None,
        model=config.model,
        role=role,
        personality=config.personality,
    )
    return spec_from_config(
        config,
        agent_id=new_id("agent"),
        run_id=run_id,
        cwd=cwd,
        model=model_settings_from_config(config, env),
        instructions=instructions,
        tools=_core_tool_names(),
        profile=profile_from_config(config, cwd),
    )


def runner_limits(spec: AgentSpec) -> RunnerLimits:
    return RunnerLimits(
        max_wall_time_s=spec.budgets.max_wall_time_s, max_cost_usd=spec.budgets.max_cost_usd
    )


async def run_single_agent(
    config: CorralConfig,
    task: str,
    *,
    cwd: Path,
    hooks: RunnerHooks,
    env: Mapping[str, str] | None = None,
    run_id: str | None = None,
    services: Mapping[str, Any] | None = None,
) -> SingleOutcome:
    """Start a run with one agent on `task` and drive it to its end."""
    environ = os.environ if env is None else env
    run_id = run_id or new_id("run")
    spec = build_exec_spec(config, cwd=cwd, env=environ, run_id=run_id)
    async with AsyncExitStack() as stack:
        store = await stack.enter_async_context(open_sqlite_store(journal_path(config)))
        await _journal_start(store, spec, task)
        client = _open_client(stack, spec)
        runner = _runner(spec, store, client, hooks, services)
        context = await anyio.to_thread.run_sync(
            lambda: build_turn_context(spec, now=datetime.now().astimezone())
        )
        finish = await runner.drive(await runner.feed(UserInput(text=task, context=context)))
        await _journal_end(store, run_id, finish)
    return SingleOutcome(
        run_id=run_id, agent_id=spec.agent_id, finish=finish, journal=journal_path(config)
    )


async def resume_single(
    config: CorralConfig,
    target: str,
    *,
    hooks: RunnerHooks,
    env: Mapping[str, str] | None = None,
    base_url: str | None = None,
    message: str | None = None,
    cwd: Path | None = None,
    services: Mapping[str, Any] | None = None,
) -> SingleOutcome:
    """Replay the journal of `target` (an agent id or a run id) and carry it on.

    With `message`, a finished agent gets a new turn (in `cwd` if given: the environment diff
    and a re-read AGENTS.md go with it; the permission profile stays the one it started with).
    """
    environ = dict(os.environ if env is None else env)
    if base_url:
        environ["CORRAL_BASE_URL"] = base_url
    async with AsyncExitStack() as stack:
        store = await stack.enter_async_context(open_sqlite_store(journal_path(config)))
        record = await _find_agent(store, target, journal_path(config))
        spec = AgentSpec.from_journal(record.config, env=environ)
        if base_url:
            spec = spec.model_copy(
                update={"model": spec.model.model_copy(update={"base_url": base_url})}
            )
        if cwd is not None:
            spec = spec.model_copy(update={"cwd": cwd})
        client = _open_client(stack, spec)
        runner = _runner(spec, store, client, hooks, services)
        runner.core = await replay_core(store, runner.core.config)
        await store.update_run(record.run_id, status="running", updated_at=time.time())
        if message is None:
            finish = await continue_agent(runner)
        else:
            finish = await _follow_up(runner, spec, message)
        await _journal_end(store, record.run_id, finish)
    return SingleOutcome(
        run_id=record.run_id, agent_id=spec.agent_id, finish=finish, journal=journal_path(config)
    )


async def _follow_up(runner: AgentRunner, spec: AgentSpec, message: str) -> Finish:
    if runner.core.waiting_for != "done":
        await continue_agent(runner)
    context = await anyio.to_thread.run_sync(
        lambda: build_turn_context(spec, now=datetime.now().astimezone())
    )
    return await runner.drive(await runner.feed(UserInput(text=message, context=context)))


def _open_client(stack: AsyncExitStack, spec: AgentSpec) -> ModelClient:
    client = open_model_client(spec.model)
    stack.push_async_callback(client.aclose)
    return client


def _runner(
    spec: AgentSpec,
    store: Store,
    client: ModelClient,
    hooks: RunnerHooks,
    services: Mapping[str, Any] | None,
) -> AgentRunner:
    registry = build_registry(spec)
    return AgentRunner(
        core=build_core(spec, registry),
        model=client,
        registry=registry,
        tool_context=build_tool_context(spec, services),
        store=store,
        hooks=hooks,
        limits=runner_limits(spec),
    )


async def _journal_start(store: Store, spec: AgentSpec, task: str) -> None:
    now = time.time()
    await store.create_run(
        RunRecord(
            run_id=spec.run_id,
            kind="exec",
            status="running",
            created_at=now,
            updated_at=now,
            config={"task": task, "cwd": str(spec.cwd)},
        )
    )
    await store.create_agent(
        AgentRecord(
            agent_id=spec.agent_id,
            run_id=spec.run_id,
            parent_id=None,
            nickname=spec.nickname,
            role=spec.role,
            status="running",
            created_at=now,
            updated_at=now,
            base_instructions=spec.instructions,
            config=spec.to_journal(),
        )
    )


async def _journal_end(store: Store, run_id: str, finish: Finish) -> None:
    await store.update_run(run_id, status=str(finish.status), updated_at=time.time())


async def _find_agent(store: Store, target: str, journal: Path) -> AgentRecord:
    agent = await store.get_agent(target)
    if agent is not None:
        return agent
    run = await store.get_run(target)
    if run is None:
        raise UnknownTarget(
            f"no run or agent named {target!r} in {journal}; `corral runs` lists the runs"
        )
    roots = [a for a in await store.list_agents(run.run_id) if a.parent_id is None]
    if not roots:
        raise UnknownTarget(f"run {target} has no agents to resume")
    return roots[0]
