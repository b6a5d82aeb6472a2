"""Runs started from one task (`corral exec`), and resuming any run (`corral resume`).

A run's agents live in a `RunRuntime`: the root agent here, and whatever it spawns when its
tools include the supervisor's. Resume rebuilds every agent of the run from the journal, parents
before children, and carries on what each had not finished.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from corral.agents import (
    AgentRecord,
    AgentSpec,
    AgentStatus,
    CorralConfig,
    Finish,
    RunnerHooks,
    RunRecord,
    Store,
    model_settings_from_config,
    open_sqlite_store,
    resolve_base_instructions,
    spec_from_config,
)
from corral.tools import (
    InvalidInput,
    PermissionProfile,
    SandboxMode,
    ToolServices,
    core_tool_names,
)

from ._lease import hold_run_lease
from ._ratelimit import RateLimiterRegistry
from ._run import (
    CLOSED,
    AgentHandle,
    ClientPool,
    RunRuntime,
    RuntimeOptions,
    ToolProvider,
    cost_of,
    open_runtime,
    price_for,
)
from .services._skills_service import SkillsService
from .services.compaction import Compactor

if TYPE_CHECKING:
    from .services._mcp_tooling import McpTooling

JOURNAL_NAME = "journal.sqlite"


class UnknownTarget(InvalidInput):
    """`corral resume` was given an id that names neither a run nor an agent."""


class NotResumable(InvalidInput):
    """`corral resume` was given a run of a kind that cannot be carried on."""


RESUMABLE_KINDS = frozenset({"exec"})
"""Run kinds `resume_single` carries on (fan-outs have their own resume)."""


@dataclass(frozen=True)
class SingleOutcome:
    run_id: str
    agent_id: str
    finish: Finish
    journal: Path


class Handoff(Protocol):
    """Somewhere else to carry a run out: a remote executor (`_executor.Executor` is the whole
    contract; it sits above this module, so the fan-out's own types appear here as `Any`).

    `run_single_agent` and `run_fanout` hand their run to the setup's handoff when it is not
    local, so every caller (the commands, the service, the pipelines) follows without knowing.
    """

    @property
    def kind(self) -> str: ...

    async def run_single(
        self,
        config: CorralConfig,
        task: str,
        *,
        cwd: Path,
        setup: RunSetup,
        run_id: str | None = None,
        role: str = "general",
    ) -> SingleOutcome: ...

    async def run_fanout(
        self,
        config: CorralConfig,
        items: Any,
        template: str,
        schema: Any,
        *,
        cwd: Path,
        setup: RunSetup,
        concurrency: int | None = None,
        run_id: str | None = None,
        out: Path | str | None = None,
        max_result_tries: int = ...,
        tools: Sequence[str] | None = None,
        on_start: Any = None,
        role: str = "general",
    ) -> Any: ...


@dataclass(frozen=True)
class RunSetup:
    """How to open a run's runtime: hooks, services for tools, and run-specific tools."""

    hooks: RunnerHooks = field(default_factory=RunnerHooks)
    services: ToolServices = field(default_factory=ToolServices)
    tool_providers: Mapping[str, ToolProvider] = field(default_factory=dict)
    env: Mapping[str, str] | None = None
    limiters: RateLimiterRegistry | None = None
    """The process's rate limiters; one per run when not given."""
    compactor: Compactor | None = None
    """The process's compaction limiter; one per run when not given."""
    skills: SkillsService | None = None
    """Skills matched to each agent's task; discovered from the run's folder when not given."""
    executor: Handoff | None = None
    """Where the run's agents execute; in this process when not given (or local)."""


def _open_mcp_tooling(config: CorralConfig) -> AbstractAsyncContextManager[McpTooling | None]:
    # Imported here: the MCP SDK and the search index cost a second at start-up, and most runs
    # configure no MCP server.
    from corral.observability import current_trace_context

    from .services._mcp_tooling import open_mcp_tooling

    return open_mcp_tooling(config, trace_context=current_trace_context)


def _compactor(config: CorralConfig) -> Compactor:
    settings = config.compaction
    return Compactor(settings.max_concurrent, wait_timeout=settings.slot_wait_timeout_sec)


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
        hidden_roots=(config.home,),
    )


def build_root_spec(
    config: CorralConfig,
    *,
    cwd: Path,
    env: Mapping[str, str],
    run_id: str,
    role: str = "general",
    extra_tools: Sequence[str] = (),
) -> AgentSpec:
    instructions = resolve_base_instructions(
        override=config.base_instructions,
        journaled=None,
        model=config.model,
        role=role,
        personality=config.personality,
    )
    spec = spec_from_config(
        config,
        agent_id=new_id("agent"),
        run_id=run_id,
        cwd=cwd,
        model=model_settings_from_config(config, env),
        instructions=instructions,
        tools=(*core_tool_names(), *extra_tools),
        profile=profile_from_config(config, cwd),
    )
    return spec.model_copy(update={"role": role, "nickname": "root"})


def _observed(
    config: CorralConfig, run_id: str, setup: RunSetup
) -> AbstractAsyncContextManager[RunnerHooks]:
    """The run's hooks, plus tracing when `[otel]` or the OTEL_* variables ask for it."""
    from corral.observability import open_observability  # the OpenTelemetry SDK costs start-up time

    env = os.environ if setup.env is None else setup.env
    return open_observability(
        config.otel,
        env,
        run_id=run_id,
        hooks=setup.hooks,
        cost_of=lambda model, usage: cost_of(usage, price_for(config.prices, model)),
    )


def _wait_observers(services: ToolServices, limiters: RateLimiterRegistry) -> ToolServices:
    """`services` with an approval observer; rate-limit waits are reported to the traced run."""
    from corral.observability import record_approval_wait, record_rate_limit_wait

    limiters.on_wait = record_rate_limit_wait  # routes by context, so a shared registry is fine
    return replace(services, approval_observer=services.approval_observer or record_approval_wait)


@asynccontextmanager
async def open_run(config: CorralConfig, run_id: str, setup: RunSetup) -> AsyncIterator[RunRuntime]:
    """The journal, the run's lease (one process per run), the shared model clients and a
    runtime for run `run_id`."""
    limiters = setup.limiters or RateLimiterRegistry.from_config(config)
    clients = ClientPool(limiters)
    try:
        async with (
            open_sqlite_store(journal_path(config)) as store,
            hold_run_lease(store, run_id),
            _open_mcp_tooling(config) as mcp,
            _observed(config, run_id, setup) as hooks,
        ):
            options = RuntimeOptions(
                config=config,
                store=store,
                run_id=run_id,
                clients=clients,
                hooks=hooks,
                services=_wait_observers(setup.services, limiters),
                tool_providers=setup.tool_providers,
                skills=setup.skills,
                equip=mcp.equip if mcp is not None else None,
                compactor=setup.compactor or _compactor(config),
            )
            async with open_runtime(options) as runtime:
                yield runtime
    finally:
        await clients.aclose()


async def run_single_agent(
    config: CorralConfig,
    task: str,
    *,
    cwd: Path,
    setup: RunSetup,
    run_id: str | None = None,
    role: str = "general",
) -> SingleOutcome:
    """Start a run whose root agent works on `task`, and wait until the whole run is done."""
    executor = setup.executor
    if executor is not None and executor.kind != "local":
        remote = replace(setup, executor=None)
        return await executor.run_single(
            config, task, cwd=cwd, setup=remote, run_id=run_id, role=role
        )
    environ = os.environ if setup.env is None else setup.env
    run_id = run_id or new_id("run")
    setup = await with_skills(setup, config, cwd)
    spec = build_root_spec(
        config,
        cwd=cwd,
        env=environ,
        run_id=run_id,
        role=role,
        extra_tools=tuple(setup.tool_providers),
    )
    async with open_run(config, run_id, setup) as runtime:
        await _journal_run(runtime.store, spec, task)
        root = await runtime.start(spec, task)
        await root.ended.wait()
        finish = _finish_of(root)
        await _journal_end(runtime.store, run_id, finish)
    return SingleOutcome(run_id, spec.agent_id, finish, journal_path(config))


async def with_skills(setup: RunSetup, config: CorralConfig, cwd: Path) -> RunSetup:
    """`setup` with the skills that apply in `cwd`, unless it has some or skills are off."""
    if setup.skills is not None or not config.skills.enabled:
        return setup
    return replace(setup, skills=await SkillsService.discover(config, cwd))


async def resume_single(
    config: CorralConfig,
    target: str,
    *,
    setup: RunSetup,
    base_url: str | None = None,
    message: str | None = None,
    cwd: Path | None = None,
) -> SingleOutcome:
    """Rebuild the run of `target` (a run or agent id) from the journal and carry it on.

    With `message`, the root agent gets a follow-up turn (in `cwd` if given: the environment
    diff and a re-read AGENTS.md go with it; the permission profile stays as it started).
    """
    environ = dict(os.environ if setup.env is None else setup.env)
    if base_url:
        environ["CORRAL_BASE_URL"] = base_url
    async with open_sqlite_store(journal_path(config)) as lookup:
        run_id = await _find_run(lookup, target, journal_path(config))
    async with open_run(config, run_id, setup) as runtime:
        await runtime.store.update_run(run_id, status="running", updated_at=time.time())
        records = await runtime.store.list_agents(run_id)
        follow_up = (message, cwd) if message is not None else None
        handles = await _restore_all(runtime, records, environ, base_url, follow_up)
        root = handles[records[0].agent_id]
        await root.ended.wait()
        finish = _finish_of(root)
        await _journal_end(runtime.store, run_id, finish)
    return SingleOutcome(run_id, root.agent_id, finish, journal_path(config))


async def _restore_all(
    runtime: RunRuntime,
    records: list[AgentRecord],
    env: Mapping[str, str],
    base_url: str | None,
    follow_up: tuple[str, Path | None] | None,
) -> dict[str, AgentHandle]:
    """Restore every agent, parents first; the root (the first) gets the follow-up, if any."""
    handles: dict[str, AgentHandle] = {}
    for index, record in enumerate(records):
        spec, task = journaled_spec(record, env, base_url, runtime.config)
        inbox: list[str] = []
        if index == 0 and follow_up is not None:
            message, cwd = follow_up
            inbox.append(message)
            if cwd is not None:
                spec = spec.model_copy(update={"cwd": cwd})
        parent = handles.get(record.parent_id) if record.parent_id else None
        closed = record.status == CLOSED
        status = AgentStatus.INTERRUPTED if closed else AgentStatus(record.status)
        handles[record.agent_id] = await runtime.restore(
            spec, task, status, parent=parent, inbox=inbox, closed=closed, launch=False
        )
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


def _finish_of(root: AgentHandle) -> Finish:
    return Finish(status=root.status, message=root.final_message, error=root.error)


async def _journal_run(store: Store, spec: AgentSpec, task: str) -> None:
    now = time.time()
    await store.create_run(
        RunRecord(
            run_id=spec.run_id,
            kind="exec",
            status="running",
            created_at=now,
            updated_at=now,
            config={"task": task, "cwd": str(spec.cwd), "role": spec.role},
        )
    )


async def _journal_end(store: Store, run_id: str, finish: Finish) -> None:
    await store.update_run(run_id, status=str(finish.status), updated_at=time.time())


async def _find_run(store: Store, target: str, journal: Path) -> str:
    agent = await store.get_agent(target)
    if agent is not None:
        return agent.run_id
    run = await store.get_run(target)
    if run is None:
        raise UnknownTarget(
            f"no run or agent named {target!r} in {journal}; `corral runs` lists the runs"
        )
    if run.kind not in RESUMABLE_KINDS:
        raise NotResumable(
            f"run {run.run_id} is a {run.kind} run, which `corral resume` cannot carry on: "
            f"its workers are tied to git worktrees that were removed; start it again"
        )
    if not await store.list_agents(run.run_id):
        raise UnknownTarget(f"run {target} has no agents to resume")
    return run.run_id
