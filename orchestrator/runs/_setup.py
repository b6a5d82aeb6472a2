"""How a run is opened: its setup (hooks, services, tools), its id and journal, its runtime.

`open_run` holds the journal, the run's lease, the shared model clients and MCP servers around
a `RunRuntime`; every run kind opens its run here. What each kind does inside is its own engine's.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from corral.agents import (
    AgentSpec,
    CorralConfig,
    RunnerHooks,
    Store,
    config_role,
    journal_target,
    model_settings_from_config,
    open_store,
    resolve_base_instructions,
    spec_from_config,
)
from corral.tools import (
    HookRunner,
    PermissionProfile,
    SandboxMode,
    ToolServices,
    core_tool_names,
)

from .._lease import hold_run_lease
from .._ratelimit import RateLimiterRegistry
from .._run import (
    ClientPool,
    RunMemory,
    RunRuntime,
    RuntimeOptions,
    ToolProvider,
    cost_of,
    open_runtime,
    price_for,
)
from ..services.compaction import Compactor

if TYPE_CHECKING:
    # Only named here: the skills index (numpy, bm25s) is loaded when a run discovers skills.
    from ..services._mcp_tooling import McpTooling
    from ..services._skills_service import SkillsService
    from ._executor import Executor

JOURNAL_NAME = "journal.sqlite"


StartCallback = Callable[[str, int, int], None]
"""Told the run id, the number of items and how many are still to do, once journaled (a
fan-out's items; on Temporal, an exec's one task once its workflow has started)."""


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
    executor: Executor | None = None
    """Where the fan-outs of a pipeline (review, triage) execute; here when not given."""
    on_start: StartCallback | None = None
    """Told when a fan-out's items are journaled (or handed to the executor), and when an exec
    run's workflow has started on Temporal."""
    clients: ClientPool | None = None
    """The process's model clients (connection pools), closed by whoever made them; one per run
    when not given, gated by `limiters`."""
    journal: Store | None = None
    """The journal open on `journal_path(config)`, shared by runs and closed by whoever opened
    it; opened per run when not given."""
    memory: RunMemory | None = None
    """Memory across runs; opened per run on the journal's file when `[memories]` is on and
    none is given."""
    hold_lease: bool = True
    """False only in a worker process of a fan-out whose parent process holds the run's lease."""


def _open_mcp_tooling(config: CorralConfig) -> AbstractAsyncContextManager[McpTooling | None]:
    # Imported only when a server is configured: the MCP SDK and the search index cost a second
    # at start-up and megabytes of memory, and most runs configure no MCP server.
    if not any(server.enabled for server in config.mcp_servers.values()):
        return nullcontext(None)
    from corral.observability import current_trace_context

    from ..services._mcp_tooling import open_mcp_tooling

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
        allowed_domains=config.network.allowed_domains,
        denied_domains=config.network.denied_domains,
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
    config = with_role_settings(config, role)
    instructions = resolve_base_instructions(
        override=config.base_instructions,
        journaled=None,
        model=config.model,
        role=role,
        personality=config.personality,
        roles=config.agents.roles,
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


def with_role_settings(config: CorralConfig, role: str) -> CorralConfig:
    """`config` as an agent of `role` runs with it: a config role's model, and its sandbox mode
    where that is narrower than the config's (a role never widens what an agent may do)."""
    own = config_role(role, config.agents.roles)
    if own is None:
        return config
    update: dict[str, object] = {"model": own.model or config.model}
    widths = (SandboxMode.READ_ONLY, SandboxMode.WORKSPACE_WRITE, SandboxMode.FULL_ACCESS)
    if own.sandbox_mode is not None:
        mode = SandboxMode(config.sandbox_mode)
        update["sandbox_mode"] = min(own.sandbox_mode, mode, key=widths.index)
    return config.model_copy(update=update)


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


def _with_user_hooks(services: ToolServices, config: CorralConfig) -> ToolServices:
    """`services` running the `[hooks]` of `config`, unless the caller brought its own."""
    if services.hooks is not None or config.hooks.empty:
        return services
    return replace(services, hooks=HookRunner(config.hooks))


@asynccontextmanager
async def open_run_memory(
    config: CorralConfig, env: Mapping[str, str]
) -> AsyncIterator[RunMemory | None]:
    """Memory where the journal is (its SQLite file or its PostgreSQL database) when
    `[memories]` is on (None when it is off); the local runtime and the Temporal worker both
    open it here."""
    if not config.memories.enabled:
        yield None
        return
    from ..memory import MemoryService, open_memories  # NumPy: only when memory is on

    async with open_memories(journal_target(config)) as store:
        yield MemoryService.for_config(store, config, env)


def _memory(
    config: CorralConfig, setup: RunSetup, env: Mapping[str, str]
) -> AbstractAsyncContextManager[RunMemory | None]:
    """The run's memory: the setup's, or the journal file's when `[memories]` is on."""
    if setup.memory is not None:
        return nullcontext(setup.memory)
    return open_run_memory(config, env)


def _journal(config: CorralConfig, setup: RunSetup) -> AbstractAsyncContextManager[Store]:
    if setup.journal is not None:
        return nullcontext(setup.journal)
    return open_store(config)


@asynccontextmanager
async def open_run(config: CorralConfig, run_id: str, setup: RunSetup) -> AsyncIterator[RunRuntime]:
    """The journal, the run's lease (one process per run), the shared model clients and a
    runtime for run `run_id`."""
    limiters = setup.limiters or RateLimiterRegistry.from_config(config)
    clients = setup.clients or ClientPool(limiters)
    try:
        async with (
            _journal(config, setup) as store,
            hold_run_lease(store, run_id) if setup.hold_lease else nullcontext(),
            _open_mcp_tooling(config) as mcp,
            _observed(config, run_id, setup) as hooks,
            _memory(config, setup, os.environ if setup.env is None else setup.env) as memory,
        ):
            options = RuntimeOptions(
                config=config,
                store=store,
                run_id=run_id,
                clients=clients,
                hooks=hooks,
                services=_with_user_hooks(_wait_observers(setup.services, limiters), config),
                tool_providers=setup.tool_providers,
                skills=setup.skills,
                equip=mcp.equip if mcp is not None else None,
                compactor=setup.compactor or _compactor(config),
                memory=memory,
            )
            async with open_runtime(options) as runtime:
                yield runtime
    finally:
        if setup.clients is None:
            await clients.aclose()


async def with_skills(setup: RunSetup, config: CorralConfig, cwd: Path) -> RunSetup:
    """`setup` with the skills that apply in `cwd`, unless it has some or skills are off."""
    if setup.skills is not None or not config.skills.enabled:
        return setup
    from ..services._skills_service import SkillsService

    return replace(setup, skills=await SkillsService.discover(config, cwd))
