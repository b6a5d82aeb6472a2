"""Runs of many agents: the runtime that schedules them, budgets, nicknames, fragments."""

from corral.agents import cost_of as cost_of

from ._admission import Capacity as Capacity
from ._admission import queue_refusal as queue_refusal
from ._assemble import AgentServices as AgentServices
from ._assemble import AssembledAgent as AssembledAgent
from ._assemble import ToolProvider as ToolProvider
from ._assemble import ToolScope as ToolScope
from ._assemble import assemble_agent as assemble_agent
from ._assemble import build_registry as build_registry
from ._assemble import first_input as first_input
from ._assemble import turn_context as turn_context
from ._budget import RunBudget as RunBudget
from ._budget import price_for as price_for
from ._budget import wall_time_reason as wall_time_reason
from ._clients import ClientPool as ClientPool
from ._fragments import Peer as Peer
from ._fragments import render_notification as render_notification
from ._fragments import render_subagent_context as render_subagent_context
from ._handle import AgentHandle as AgentHandle
from ._handle import FinishCallback as FinishCallback
from ._handle import Restoring as Restoring
from ._names import nickname as nickname
from ._runtime import CLOSED as CLOSED
from ._runtime import RunRuntime as RunRuntime
from ._runtime import RuntimeOptions as RuntimeOptions
from ._runtime import SpawnRefused as SpawnRefused
from ._runtime import open_runtime as open_runtime

__all__ = [
    "CLOSED",
    "AgentHandle",
    "AgentServices",
    "AssembledAgent",
    "Capacity",
    "ClientPool",
    "FinishCallback",
    "Peer",
    "Restoring",
    "RunBudget",
    "RunRuntime",
    "RuntimeOptions",
    "SpawnRefused",
    "ToolProvider",
    "ToolScope",
    "assemble_agent",
    "build_registry",
    "cost_of",
    "first_input",
    "nickname",
    "open_runtime",
    "price_for",
    "queue_refusal",
    "render_notification",
    "render_subagent_context",
    "turn_context",
    "wall_time_reason",
]
