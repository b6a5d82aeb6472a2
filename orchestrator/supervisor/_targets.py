"""Finding a caller's workers by id or nickname, and describing them as the collab tools answer.

A caller may address only its own descendants; anything else is an `UnknownTarget` that lists
whom it may address instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from corral.agents import AgentStatus

from .._run import AgentHandle, RunRuntime
from ._catalog import TASK_PREVIEW_CHARS
from ._errors import CollabError, UnknownTarget


def caller_of(runtime: RunRuntime, agent_id: str) -> AgentHandle:
    """The agent whose tool is running; it is always known while its tool runs."""
    handle = runtime.get(agent_id)
    if handle is None:
        raise CollabError(f"agent {agent_id} is not part of this run")
    return handle


def find_descendant(caller: AgentHandle, target: str) -> AgentHandle:
    """The descendant of `caller` whose id or nickname is `target`."""
    wanted = target.strip()
    for agent in caller.subtree()[1:]:
        if wanted in (agent.agent_id, agent.nickname):
            return agent
    raise UnknownTarget(f"no worker of yours is called {target!r}; {_children_listing(caller)}")


def find_descendants(caller: AgentHandle, targets: Sequence[str]) -> list[AgentHandle]:
    found: dict[str, AgentHandle] = {}
    for target in targets:
        agent = find_descendant(caller, target)
        found[agent.agent_id] = agent
    return list(found.values())


def status_label(agent: AgentHandle) -> str:
    if agent.closed:
        return "closed"
    if agent.waiting_to_start:
        return "queued"
    # Started, its first turn not yet begun: to its parent it is running already.
    return str(AgentStatus.RUNNING if agent.status is AgentStatus.PENDING else agent.status)


def describe_status(agent: AgentHandle) -> dict[str, Any]:
    """What `wait_agent` answers for one finished worker."""
    message = agent.final_message if agent.final_message is not None else agent.error
    return {"status": status_label(agent), "nickname": agent.nickname, "message": message}


def describe_agent(agent: AgentHandle) -> dict[str, Any]:
    """What `list_agents` answers for one worker."""
    return {
        "agent_id": agent.agent_id,
        "nickname": agent.nickname,
        "role": agent.spec.role,
        "status": status_label(agent),
        "depth": agent.depth,
        "parent": agent.spec.parent_id,
        "task": agent.task[:TASK_PREVIEW_CHARS],
    }


def _children_listing(caller: AgentHandle) -> str:
    if not caller.children:
        return "you have no workers yet; start one with spawn_agent"
    names = ", ".join(f"{c.nickname} ({c.agent_id}, {status_label(c)})" for c in caller.children)
    return f"your workers are: {names}"
