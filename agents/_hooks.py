"""The runner's hook interface: where observability (and live UIs) plug in from outside.

Every method has a do-nothing default, so a hook implements only what it needs. Hooks are
called at one boundary that contains their exceptions: a broken hook never stops an agent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import TracebackType
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


class SafeHooks(RunnerHooks):
    """Wraps hooks so that an exception in one is logged and swallowed: one typed method per
    hook, each the containment boundary for that hook's code."""

    def __init__(self, inner: RunnerHooks) -> None:
        self._inner = inner

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        with _contained("agent_started"):
            self._inner.agent_started(agent_id, parent_id, name)

    def turn_started(self, agent_id: str, turn: int) -> None:
        with _contained("turn_started"):
            self._inner.turn_started(agent_id, turn)

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None:
        with _contained("turn_ended"):
            self._inner.turn_ended(agent_id, turn, status)

    def model_call_started(self, agent_id: str, request: ModelRequest) -> None:
        with _contained("model_call_started"):
            self._inner.model_call_started(agent_id, request)

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None:
        with _contained("model_call_ended"):
            self._inner.model_call_ended(agent_id, request, response, error)

    def tool_call_started(self, agent_id: str, call: FunctionCall) -> None:
        with _contained("tool_call_started"):
            self._inner.tool_call_started(agent_id, call)

    def tool_call_ended(self, agent_id: str, call: FunctionCall, output: ToolOutput) -> None:
        with _contained("tool_call_ended"):
            self._inner.tool_call_ended(agent_id, call, output)

    def compaction_started(self, agent_id: str, dropped_items: int) -> None:
        with _contained("compaction_started"):
            self._inner.compaction_started(agent_id, dropped_items)

    def compaction_ended(self, agent_id: str, error: str | None) -> None:
        with _contained("compaction_ended"):
            self._inner.compaction_ended(agent_id, error)

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        with _contained("event"):
            self._inner.event(agent_id, seq, kind, payload)


class _contained:
    """The containment boundary for hook code: an exception is logged and swallowed.

    A class rather than a `@contextmanager` generator: hooks are called about ten times a
    turn, and the generator's set-up was most of the cost of a hook that does nothing."""

    __slots__ = ("_hook",)

    def __init__(self, hook: str) -> None:
        self._hook = hook

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if not isinstance(error, Exception):
            return False  # none, or a cancellation or exit that must go on
        logger.error("hook %s failed", self._hook, exc_info=error)
        return True


class CompositeHooks(RunnerHooks):
    """Calls several hooks objects in order, each contained on its own."""

    def __init__(self, *hooks: RunnerHooks) -> None:
        self._all = [SafeHooks(h) for h in hooks]

    def agent_started(self, agent_id: str, parent_id: str | None, name: str) -> None:
        for hooks in self._all:
            hooks.agent_started(agent_id, parent_id, name)

    def turn_started(self, agent_id: str, turn: int) -> None:
        for hooks in self._all:
            hooks.turn_started(agent_id, turn)

    def turn_ended(self, agent_id: str, turn: int, status: AgentStatus) -> None:
        for hooks in self._all:
            hooks.turn_ended(agent_id, turn, status)

    def model_call_started(self, agent_id: str, request: ModelRequest) -> None:
        for hooks in self._all:
            hooks.model_call_started(agent_id, request)

    def model_call_ended(
        self,
        agent_id: str,
        request: ModelRequest,
        response: ModelResponse | None,
        error: BaseException | None,
    ) -> None:
        for hooks in self._all:
            hooks.model_call_ended(agent_id, request, response, error)

    def tool_call_started(self, agent_id: str, call: FunctionCall) -> None:
        for hooks in self._all:
            hooks.tool_call_started(agent_id, call)

    def tool_call_ended(self, agent_id: str, call: FunctionCall, output: ToolOutput) -> None:
        for hooks in self._all:
            hooks.tool_call_ended(agent_id, call, output)

    def compaction_started(self, agent_id: str, dropped_items: int) -> None:
        for hooks in self._all:
            hooks.compaction_started(agent_id, dropped_items)

    def compaction_ended(self, agent_id: str, error: str | None) -> None:
        for hooks in self._all:
            hooks.compaction_ended(agent_id, error)

    def event(self, agent_id: str, seq: int, kind: str, payload: Mapping[str, Any]) -> None:
        for hooks in self._all:
            hooks.event(agent_id, seq, kind, payload)
