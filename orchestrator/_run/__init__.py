"""Runs of many agents: the runtime that schedules them, budgets, nicknames, fragments."""

from ._admission import Capacity as Capacity
from ._admission import queue_refusal as queue_refusal
from ._budget import RunBudget as RunBudget
from ._budget import cost_of as cost_of
from ._budget import price_for as price_for
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
from ._runtime import ToolProvider as ToolProvider
from ._runtime import open_runtime as open_runtime

__all__ = [
    "CLOSED",
    "AgentHandle",
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
    "cost_of",
    "nickname",
    "open_runtime",
    "price_for",
    "queue_refusal",
    "render_notification",
    "render_subagent_context",
]
