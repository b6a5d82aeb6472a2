"""Hooks the user configures: their commands run on an agent's lifecycle events.

`HooksConfig` is the `[hooks]` table; `HookRunner` runs an event's commands and reads their
answers; `dispatch_with_hooks` puts the tool hooks around a tool call. Journaling and tracing
the runs (`HookRun`) is the drivers' and observability's business.
"""

from .._hook_model import BLOCKING_EVENTS as BLOCKING_EVENTS
from .._hook_model import HookCommand as HookCommand
from .._hook_model import HookEvent as HookEvent
from .._hook_model import HookMatcher as HookMatcher
from .._hook_model import HookRun as HookRun
from .._hook_model import HooksConfig as HooksConfig
from ._run import HookOutcome as HookOutcome
from ._run import HookRunner as HookRunner
from ._run import HookScope as HookScope
from ._tools import approve_with_hooks as approve_with_hooks
from ._tools import dispatch_with_hooks as dispatch_with_hooks
from ._tools import hook_scope as hook_scope
from ._tools import permission_by_hooks as permission_by_hooks

__all__ = [
    "BLOCKING_EVENTS",
    "HookCommand",
    "HookEvent",
    "HookMatcher",
    "HookOutcome",
    "HookRun",
    "HookRunner",
    "HookScope",
    "HooksConfig",
    "approve_with_hooks",
    "dispatch_with_hooks",
    "hook_scope",
    "permission_by_hooks",
]
