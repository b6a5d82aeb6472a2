"""The runner's hook interface: where observability (and live UIs) plug in from outside.

Every method has a do-nothing default, so a hook implements only what it needs. Hooks are
called at one boundary that contains their exceptions: a broken hook never stops an agent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from corral.tools import ToolOutput

from ._events import AgentStatus
from ._items import FunctionCall
from .model._types import ModelRequest, ModelResponse

logger = logging.getLogger(__name__)


class RunnerHooks:
    """Called as an agent works; subclass and override what you need."""

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        """The run's runtime started (or restored) an agent; `parent_id` is its spawner's."""

    def turn_started(self, agent_id: str, turn: int) -> None: ...

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None: ...

    def model_call_started(self, agent_id: str, request: ModelRequest) -> None: ...

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None: ...

    def tool_call_started(self, agent_id: str, call: FunctionCall) -> None: ...

    def tool_call_ended(self, agent_id: str, call: FunctionCall, output: ToolOutput) -> None: ...

    def compaction_started(self, agent_id: str, dropped_items: int) -> None: ...

    def compaction_ended(self, agent_id: str, error: str | None) -> None: ...

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None: ...


class SafeHooks:
    """Wraps hooks so that an exception in one is logged and swallowed."""

    def __init__(self, inner: RunnerHooks) -> None:
        self._inner = inner

    def call(self, name: str, *args: Any) -> None:
        try:
            getattr(self._inner, name)(*args)
        except Exception:  # the containment boundary for hook code
            logger.exception("hook %s failed", name)


class CompositeHooks(RunnerHooks):
    """Calls several hooks objects in order, each contained on its own."""

    def __init__(self, *hooks: RunnerHooks) -> None:
        self._all = [SafeHooks(h) for h in hooks]

    def _each(self, name: str, *args: Any) -> None:
        for hooks in self._all:
            hooks.call(name, *args)

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        self._each("agent_started", agent_id, parent_id, name)

    def turn_started(self, agent_id: str, turn: int) -> None:
        self._each("turn_started", agent_id, turn)

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None:
        self._each("turn_ended", agent_id, turn, status)

    def model_call_started(self, agent_id: str, request: ModelRequest) -> None:
        self._each("model_call_started", agent_id, request)

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None:
        self._each("model_call_ended", agent_id, request, response, error)

    def tool_call_started(self, agent_id: str, call: FunctionCall) -> None:
        self._each("tool_call_started", agent_id, call)

    def tool_call_ended(self, agent_id: str, call: FunctionCall, output: ToolOutput) -> None:
        self._each("tool_call_ended", agent_id, call, output)

    def compaction_started(self, agent_id: str, dropped_items: int) -> None:
        self._each("compaction_started", agent_id, dropped_items)

    def compaction_ended(self, agent_id: str, error: str | None) -> None:
        self._each("compaction_ended", agent_id, error)

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        self._each("event", agent_id, seq, kind, payload)
