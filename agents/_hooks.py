"""The runner's hook interface: where observability (and live UIs) plug in from outside.

Every method has a do-nothing default, so a hook implements only what it needs. Hooks are
called at one boundary that contains their exceptions: a broken hook never stops an agent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from tools import ToolOutput

from ._events import AgentStatus
from ._items import FunctionCall
from .model._types import ModelRequest, ModelResponse

logger = logging.getLogger(__name__)


class RunnerHooks:
    """Called as an agent works; subclass and override what you need."""

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
