"""The collab tools as run-specific tool providers: spawn, message, wait for, close, list.

Each provider builds one agent's tool; the handler looks the agent up in the runtime when it
runs, so a restored agent gets the same tools. All of them run alone (never in parallel with
another call), as in Codex. Refusals are raised and reach the model as failed outputs.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from corral.agents import AgentsConfig, role_descriptions
from corral.tools import SandboxMode, Tool, ToolContext, ToolOutput

from .._run import RunRuntime, ToolProvider, ToolScope
from ._catalog import (
    CLOSE_AGENT,
    LIST_AGENTS,
    SEND_INPUT,
    SPAWN_AGENT,
    WAIT_AGENT,
    WAIT_DEFAULT_MS,
    WAIT_MAX_MS,
    close_description,
    list_description,
    send_input_description,
    spawn_description,
    wait_description,
)
from ._errors import CollabError
from ._spawn import SpawnRequest, spawn_child
from ._targets import (
    caller_of,
    describe_agent,
    describe_status,
    find_descendant,
    find_descendants,
    status_label,
)

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SpawnAgentArgs(_Args):
    """Any role name is accepted here; the run's own model (`spawn_args_for`) lists the roles
    it knows in the schema, and spawning refuses any other."""

    message: str = Field(description="The worker's task, complete in itself.")
    role: str | None = Field(default=None, description="The worker's role (default general).")
    model: str | None = Field(default=None, description="A model name (default: yours).")
    sandbox: SandboxMode | None = Field(
        default=None, description="The worker's sandbox mode (default: yours; never wider)."
    )
    write_set: list[str] | None = Field(
        default=None, description="Files or folders the worker alone may change."
    )
    allowed_domains: list[str] | None = Field(
        default=None,
        description="Hosts the worker's commands may reach (default: yours; never wider).",
    )


class SendInputArgs(_Args):
    target: str = Field(description="The worker's agent id or nickname.")
    message: str = Field(description="What to tell it.")
    interrupt: bool = Field(default=False, description="Stop its current turn first.")


class WaitAgentArgs(_Args):
    targets: list[str] = Field(description="Agent ids or nicknames of workers to wait for.")
    timeout_ms: int = Field(default=WAIT_DEFAULT_MS, description="How long to wait at most.")


class CloseAgentArgs(_Args):
    target: str = Field(description="The worker's agent id or nickname.")


class ListAgentsArgs(_Args):
    pass


def collab_tool_providers() -> dict[str, ToolProvider]:
    """The five collab tools by name, in the order agents are given them."""
    return {
        SPAWN_AGENT: spawn_agent_tool,
        SEND_INPUT: send_input_tool,
        WAIT_AGENT: wait_agent_tool,
        CLOSE_AGENT: close_agent_tool,
        LIST_AGENTS: list_agents_tool,
    }


@lru_cache(maxsize=32)
def _spawn_args_model(roles: tuple[tuple[str, str], ...]) -> type[SpawnAgentArgs]:
    names = tuple(name for name, _ in roles)
    listed = "; ".join(f"{name}: {description}" for name, description in roles)
    role = Field(default=None, description=f"The worker's role (default general). {listed}.")
    choice: Any = Literal[names]
    return create_model("SpawnAgentArgs", __base__=SpawnAgentArgs, role=(choice | None, role))


def spawn_args_for(agents: AgentsConfig) -> type[SpawnAgentArgs]:
    """`spawn_agent`'s arguments as the run's model sees them: `role` is one of the built-in
    roles or the config's own, each named with what it is for, always in the same order (one
    model per set of roles, so every agent of the run sends the same schema)."""
    roles = getattr(agents, "roles", None) or {}
    return _spawn_args_model(tuple(role_descriptions(roles).items()))


def spawn_agent_tool(scope: ToolScope) -> Tool[SpawnAgentArgs]:
    agent_id = scope.agent_id

    async def spawn(args: SpawnAgentArgs, ctx: ToolContext) -> ToolOutput:
        runtime = _runtime_of(scope)
        request = SpawnRequest(
            message=args.message,
            role=args.role or "general",
            model=args.model,
            sandbox=args.sandbox,
            write_set=tuple(args.write_set or ()),
            allowed_domains=None if args.allowed_domains is None else tuple(args.allowed_domains),
        )
        parent = caller_of(runtime, agent_id)
        child = await spawn_child(runtime, parent, request)
        return _json(
            {
                "agent_id": child.agent_id,
                "nickname": child.nickname,
                "status": status_label(child),
                "capacity": runtime.capacity(parent).as_json(),
            }
        )

    description = spawn_description(scope.agents)
    args_model = spawn_args_for(scope.agents)
    return _tool(SPAWN_AGENT, description, args_model, spawn, mutating=True)


def send_input_tool(scope: ToolScope) -> Tool[SendInputArgs]:
    agent_id = scope.agent_id

    async def send(args: SendInputArgs, ctx: ToolContext) -> ToolOutput:
        runtime = _runtime_of(scope)
        if not args.message.strip():
            raise CollabError("the message is empty; say what the worker should do")
        target = find_descendant(caller_of(runtime, agent_id), args.target)
        await runtime.send_input(target, args.message, interrupt=args.interrupt)
        return _json({"delivered": True})

    return _tool(SEND_INPUT, send_input_description(), SendInputArgs, send, mutating=True)


def wait_agent_tool(scope: ToolScope) -> Tool[WaitAgentArgs]:
    agent_id = scope.agent_id

    async def wait(args: WaitAgentArgs, ctx: ToolContext) -> ToolOutput:
        runtime = _runtime_of(scope)
        if not args.targets:
            raise CollabError("targets is empty; name at least one worker to wait for")
        if args.timeout_ms < 0:
            raise CollabError(f"timeout_ms must be 0 or more, not {args.timeout_ms}")
        targets = find_descendants(caller_of(runtime, agent_id), args.targets)
        within = min(args.timeout_ms, WAIT_MAX_MS) / 1000
        done, timed_out = await runtime.wait(targets, within)
        status = {agent_id: describe_status(agent) for agent_id, agent in done.items()}
        return _json({"status": status, "timed_out": timed_out})

    # Waiting changes nothing, so a resumed supervisor simply waits again.
    return _tool(WAIT_AGENT, wait_description(), WaitAgentArgs, wait, side_effects=False)


def close_agent_tool(scope: ToolScope) -> Tool[CloseAgentArgs]:
    agent_id = scope.agent_id

    async def close(args: CloseAgentArgs, ctx: ToolContext) -> ToolOutput:
        runtime = _runtime_of(scope)
        target = find_descendant(caller_of(runtime, agent_id), args.target)
        previous = status_label(target)
        if not target.closed:
            await runtime.close(target)
        return _json({"previous_status": previous})

    return _tool(CLOSE_AGENT, close_description(), CloseAgentArgs, close, mutating=True)


def list_agents_tool(scope: ToolScope) -> Tool[ListAgentsArgs]:
    agent_id = scope.agent_id

    async def list_agents(args: ListAgentsArgs, ctx: ToolContext) -> ToolOutput:
        runtime = _runtime_of(scope)
        caller = caller_of(runtime, agent_id)
        agents = [describe_agent(a) for a in caller.subtree()[1:]]
        return _json({"agents": agents, "capacity": runtime.capacity(caller).as_json()})

    return _tool(LIST_AGENTS, list_description(), ListAgentsArgs, list_agents, side_effects=False)


def _runtime_of(scope: ToolScope) -> RunRuntime:
    """The run's agents: a tool built only for its schema (on Temporal, where the workflow
    carries collab calls out) has none to act on."""
    if scope.collab is None:
        raise CollabError("the collab tools run in the agent's workflow, not on its host")
    return scope.collab


def _tool(
    name: str,
    description: str,
    args: type[ArgsT],
    handler: Callable[[ArgsT, ToolContext], Awaitable[ToolOutput]],
    *,
    mutating: bool = False,
    side_effects: bool = True,
) -> Tool[ArgsT]:
    return Tool(
        name=name,
        description=description,
        args=args,
        handler=handler,
        mutating=mutating,
        parallel=False,
        side_effects=side_effects,
    )


def _json(value: dict[str, Any]) -> ToolOutput:
    return ToolOutput(json.dumps(value, ensure_ascii=False))
