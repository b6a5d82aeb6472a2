"""Spawning a worker: the limits that may refuse it, its spec, and its start under its parent.

A worker inherits its parent's settings (model endpoint, budgets, shell, cwd, AGENTS.md) and
gets its own id, nickname, role instructions, tools and a profile no wider than its parent's.
Siblings of one role get byte-identical instructions and tools, so their prompts share a prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from corral.agents import (
    AgentsConfig,
    AgentSpec,
    ModelSettings,
    RoleConfig,
    check_role,
    config_role,
    resolve_base_instructions,
)
from corral.tools import InvalidInput, SandboxMode, core_tool_names

from .._run import (
    AgentHandle,
    Peer,
    RunRuntime,
    SpawnRefused,
    render_subagent_context,
    spawn_refusal,
)
from ..runs import new_id
from ._catalog import COLLAB_TOOL_NAMES
from ._profile import child_profile, write_set_of

_SANDBOX_WIDTH = (SandboxMode.READ_ONLY, SandboxMode.WORKSPACE_WRITE, SandboxMode.FULL_ACCESS)


@dataclass(frozen=True)
class SpawnRequest:
    """What a parent asks for: the task, and optionally a role, model, sandbox and write set."""

    message: str
    role: str = "general"
    model: str | None = None
    sandbox: SandboxMode | None = None
    write_set: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] | None = None


async def spawn_child(
    runtime: RunRuntime, parent: AgentHandle, request: SpawnRequest
) -> AgentHandle:
    """Start a worker of `parent` on `request.message`, or queue it while `parent` has
    `agents.max_threads` running; raises `SpawnRefused` with the reason."""
    check_limits(runtime, parent)
    config = runtime.config
    terms = SpawnTerms(config.agents, config.personality, runtime.next_nickname)
    spec = child_spec(terms, parent.spec, request)
    context = render_subagent_context(
        me=peer_of(spec),
        parent=peer_of(parent.spec),
        task=request.message,
        siblings=[peer_of(c.spec) for c in parent.children if not c.closed],
    )
    queued = not runtime.capacity(parent).has_room
    return await runtime.start(
        spec, request.message, parent=parent, subagent_context=context, queued=queued
    )


def check_limits(runtime: RunRuntime, parent: AgentHandle) -> None:
    """Refuse when the child would nest too deep, could neither start nor wait in the queue,
    or the run budget is spent."""
    capacity, limits = runtime.capacity(parent), runtime.config.agents
    refused = spawn_refusal(parent.depth, capacity, limits, runtime.budget.exhausted)
    if refused is not None:
        raise SpawnRefused(refused)


@dataclass(frozen=True)
class SpawnTerms:
    """What the run fixes for the workers it spawns: its limits and personality, and where
    the next nickname comes from (asked only once the request is valid)."""

    agents: AgentsConfig
    personality: str
    next_nickname: Callable[[], str]


def child_spec(terms: SpawnTerms, parent: AgentSpec, request: SpawnRequest) -> AgentSpec:
    """The worker's spec: the parent's, with its own identity, instructions, tools and profile."""
    roles = terms.agents.roles
    _check_request(request, roles)
    own = config_role(request.role, roles)
    depth = parent.depth + 1
    model = _model_for(parent.model, _model_name(request, own))
    profile = child_profile(
        parent.profile,
        cwd=parent.cwd,
        sandbox=_sandbox_for(request, own),
        write_set=request.write_set,
        allowed_domains=request.allowed_domains,
    )
    instructions = resolve_base_instructions(
        override=None,
        journaled=None,
        model=model.model,
        role=request.role,
        personality=terms.personality,
        roles=roles,
    )
    update = {
        "agent_id": new_id("agent"),
        "run_id": parent.run_id,
        "parent_id": parent.agent_id,
        "nickname": terms.next_nickname(),
        "role": request.role,
        "depth": depth,
        "model": model,
        "instructions": instructions,
        "tools": child_tools(depth, terms.agents.max_depth),
        "profile": profile,
    }
    return parent.model_copy(update=update)


def child_tools(depth: int, max_depth: int) -> tuple[str, ...]:
    """The core tools, and the collab tools only while the worker may still spawn (Codex)."""
    if depth < max_depth:
        return (*core_tool_names(), *COLLAB_TOOL_NAMES)
    return core_tool_names()


def peer_of(spec: AgentSpec) -> Peer:
    return Peer(
        agent_id=spec.agent_id, nickname=spec.nickname, write_set=write_set_of(spec.profile)
    )


def _check_request(request: SpawnRequest, roles: Mapping[str, RoleConfig]) -> None:
    if not request.message.strip():
        raise SpawnRefused("the worker's message is empty; say what it should do")
    try:
        check_role(request.role, roles)
    except InvalidInput as exc:
        raise SpawnRefused(str(exc)) from None
    if request.model is not None and not request.model.strip():
        raise SpawnRefused("the model name is empty; leave it out to use your own model")


def _model_name(request: SpawnRequest, role: RoleConfig | None) -> str | None:
    """The role's model, which the spawn may not change (as in Codex), else the one asked for."""
    fixed = role.model if role is not None else None
    if fixed is None:
        return request.model
    if request.model is not None and request.model.strip() != fixed:
        raise SpawnRefused(
            f"role {request.role} always uses model {fixed}; leave `model` out for this role"
        )
    return fixed


def _sandbox_for(request: SpawnRequest, role: RoleConfig | None) -> SandboxMode | None:
    """The narrower of the role's sandbox mode and the one asked for; the parent's profile
    narrows it again (`child_profile`), so a role never widens what a worker may do."""
    asked = [m for m in (request.sandbox, role.sandbox_mode if role else None) if m is not None]
    return min(asked, key=_SANDBOX_WIDTH.index) if asked else None


def _model_for(parent: ModelSettings, name: str | None) -> ModelSettings:
    return parent if name is None else parent.model_copy(update={"model": name.strip()})
