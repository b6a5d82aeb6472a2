"""`assemble_agent`: one agent's tool registry and core, built the same way by both executors.

The registry holds the core tools the spec names, in its order, then the run's own tools
(`report_result`, the collab tools), each built by its `ToolProvider` from a narrow `ToolScope`,
then the process's shared tools (MCP, `tool_search`). The local runtime and the Temporal
worker's activities both call it, so an agent gets the same tools, in the same order, on either.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from corral.agents import (
    AgentCore,
    AgentsConfig,
    AgentSpec,
    ModelPrice,
    TurnContext,
    UserInput,
    build_core,
    build_turn_context,
)
from corral.tools import (
    HostAbilities,
    InvalidInput,
    Tool,
    ToolRegistry,
    build_core_registry,
    known_tool_names,
    offered_tool_names,
    with_session_tools,
)

from ._budget import price_for

if TYPE_CHECKING:
    from ._runtime import RunRuntime


@dataclass(frozen=True)
class ToolScope:
    """What a run-specific tool provider may use to build one agent's tool."""

    agent_id: str
    agents: AgentsConfig
    """The run's limits (the collab tools' descriptions name them)."""
    collab: RunRuntime | None = None
    """The run's agents, which the collab tools' handlers act on; None where a tool is built
    only for its schema (on Temporal the workflow carries collab calls out itself)."""


ToolProvider = Callable[[ToolScope], Tool[Any]]
"""Builds a run-specific tool for one agent (its handler looks things up when it runs)."""


@dataclass(frozen=True)
class AgentServices:
    """What a run gives every agent it assembles."""

    agents: AgentsConfig
    providers: Mapping[str, ToolProvider]
    collab: RunRuntime | None = None
    equip: Callable[[ToolRegistry], object] | None = None
    """Adds the process's shared tools (MCP, `tool_search`) to a registry."""
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    """The configured prices (over the built-in table): the core keeps the cost budgets."""
    host: HostAbilities | None = None
    """What this host can do for tools (None: probed once per process, and no sessions)."""


@dataclass(frozen=True)
class AssembledAgent:
    registry: ToolRegistry
    core: AgentCore


def assemble_agent(spec: AgentSpec, services: AgentServices) -> AssembledAgent:
    """The agent's registry (shared tools included) and a fresh core offering its tools."""
    registry = build_registry(spec, services)
    if services.equip is not None:
        services.equip(registry)
    price = price_for(services.prices, spec.model.model)
    return AssembledAgent(registry=registry, core=build_core(spec, registry, price))


def build_registry(spec: AgentSpec, services: AgentServices) -> ToolRegistry:
    """The core tools named in the spec, then the run's own tools, in the spec's order, less
    the ones the agent's profile or the host rule out (`offered_tool_names`)."""
    core = set(known_tool_names())
    wanted = with_session_tools(spec.tools) if spec.shell.unified_exec else spec.tools
    names = offered_tool_names(wanted, spec.profile, services.host or host_abilities())
    registry = build_core_registry(
        [n for n in names if n in core],
        max_timeout_ms=spec.shell.max_timeout_ms,
        default_timeout_ms=spec.shell.default_timeout_ms,
        output_max_tokens=spec.shell.output_max_tokens,
        approval_timeout=spec.shell.approval_timeout_sec,
        shell_env=spec.shell_environment_policy.set,
    )
    scope = ToolScope(agent_id=spec.agent_id, agents=services.agents, collab=services.collab)
    for name in names:
        if name in core:
            continue
        provider = services.providers.get(name)
        if provider is None:
            raise InvalidInput(f"agent {spec.agent_id} needs tool {name!r}; this run lacks it")
        registry.register(provider(scope))
    return registry


@functools.cache
def host_abilities(*, sessions: bool = False) -> HostAbilities:
    """This machine's abilities, probed once per process; `sessions`: the run owns sessions."""
    return HostAbilities.probe(sessions=sessions)


async def first_input(
    spec: AgentSpec,
    task: str,
    *,
    subagent_context: str | None = None,
    skills: str | None = None,
    attachments: tuple[str, ...] = (),
) -> UserInput:
    """The agent's task with its full turn context (AGENTS.md read in a thread)."""
    context = await turn_context(spec, subagent_context, skills)
    return UserInput(text=task, context=context, attachments=attachments)


async def turn_context(
    spec: AgentSpec, subagent_context: str | None, skills: str | None
) -> TurnContext:
    """The environment and AGENTS.md as they are now, read in a thread (blocking reads)."""
    now = datetime.now().astimezone()
    return await anyio.to_thread.run_sync(
        lambda: build_turn_context(spec, now=now, subagent_context=subagent_context, skills=skills)
    )
