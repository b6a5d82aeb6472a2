"""Runs of many agents: the runtime that schedules them, budgets, nicknames, fragments."""

from corral.agents import cost_of as cost_of

from ._admission import Capacity as Capacity
from ._admission import Slot as Slot
from ._admission import capacity_among as capacity_among
from ._admission import never_started as never_started
from ._admission import no_more_input as no_more_input
from ._admission import queue_refusal as queue_refusal
from ._admission import ready_among as ready_among
from ._admission import spawn_refusal as spawn_refusal
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
from ._lifecycle import blocked_prompt as blocked_prompt
from ._lifecycle import fire_compaction_hooks as fire_compaction_hooks
from ._lifecycle import fire_finish_hooks as fire_finish_hooks
from ._lifecycle import fire_prompt_hooks as fire_prompt_hooks
from ._lifecycle import fire_start_hooks as fire_start_hooks
from ._names import nickname as nickname
from ._options import RuntimeOptions as RuntimeOptions
from ._recall import RunMemory as RunMemory
from ._runtime import CLOSED as CLOSED
from ._runtime import RunRuntime as RunRuntime
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
    "RunMemory",
    "RunRuntime",
    "RuntimeOptions",
    "Slot",
    "SpawnRefused",
    "ToolProvider",
    "ToolScope",
    "assemble_agent",
    "blocked_prompt",
    "build_registry",
    "capacity_among",
    "cost_of",
    "fire_compaction_hooks",
    "fire_finish_hooks",
    "fire_prompt_hooks",
    "fire_start_hooks",
    "first_input",
    "never_started",
    "nickname",
    "no_more_input",
    "open_runtime",
    "price_for",
    "queue_refusal",
    "ready_among",
    "render_notification",
    "render_subagent_context",
    "spawn_refusal",
    "turn_context",
    "wall_time_reason",
]
