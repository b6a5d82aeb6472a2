"""The tool registry: specs rendered for both model APIs, and dispatch that never raises.

A tool is a pydantic model of its arguments, an async handler and two flags. The registry turns
model calls into validated invocations; anything wrong with a call (unknown name, bad JSON,
arguments that fail validation, a handler that refuses) comes back as a failed `ToolOutput`
that tells the model what was wrong. Running several calls at once lives in `_parallel`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from ._approval import APPROVAL_TIMEOUT
from ._errors import CorralError
from ._hook_model import HookRun
from ._permissions import PermissionProfile
from ._schema import shared_strict_schema
from ._services import ToolServices

logger = logging.getLogger(__name__)

ArgsT = TypeVar("ArgsT", bound=BaseModel)


@dataclass(frozen=True)
class ToolOutput:
    """What a tool call answers the model: text, whether the call succeeded, and images
    (data URLs) to show the model after the text (`view_image`).

    `network_denials` lists the connections corral's proxy refused during the call (`host:
    reason`), for the journal, `corral status` and the traces; the text tells the model.
    """

    text: str
    success: bool = True
    images: tuple[str, ...] = ()
    network_denials: tuple[str, ...] = ()
    hook_runs: tuple[HookRun, ...] = ()
    """The user's hooks that ran around the call (see `_user_hooks`)."""

    @classmethod
    def error(cls, message: str) -> ToolOutput:
        return cls(text=message, success=False)


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for: its id, the tool's name and the raw JSON arguments."""

    call_id: str
    name: str
    arguments: str


class ToolEvents(Protocol):
    """Where tools report things the agent's event stream should show (e.g. plan updates)."""

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None: ...


class _DiscardEvents:
    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        del kind, payload


@dataclass
class ToolContext:
    """What a handler may use: the working directory, the profile, the event sink, and the
    optional shared components (`ToolServices`: the sandbox, an approver)."""

    cwd: Path
    profile: PermissionProfile
    events: ToolEvents = field(default_factory=_DiscardEvents)
    services: ToolServices = field(default_factory=ToolServices)
    agent_id: str = ""
    """The agent whose turn calls the tool ("" outside an agent, as in tests)."""
    approval_timeout: float = APPROVAL_TIMEOUT
    """How long a tool outside the core set (an MCP tool) waits for an approval."""


Handler = Callable[[ArgsT, ToolContext], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class Tool(Generic[ArgsT]):
    """A tool: its name, description, argument model, handler and concurrency flags.

    `mutating` tools change the world; `parallel` tools may share the turn with other parallel
    tools (a read lock), the rest run alone (the write lock). `side_effects` says whether running
    a call twice could do harm: a resumed agent runs an interrupted call again only when it is
    False, and otherwise tells the model the outcome is unknown; True, the safe answer, unless
    the tool only reads. `schema`, when set, is sent as the
    parameters instead of the one rendered from `args` (for a schema no pydantic model states, such
    as one a user supplied); it goes out without strict mode, whose rules it need not follow, and
    `args` must accept whatever it allows.
    """

    name: str
    description: str
    args: type[ArgsT]
    handler: Handler[ArgsT]
    mutating: bool = False
    parallel: bool = True
    schema: dict[str, Any] | None = None
    side_effects: bool = True

    @property
    def strict(self) -> bool:
        return self.schema is None

    def parameters_schema(self) -> dict[str, Any]:
        """The parameters sent to the model; shared with every agent offering the tool, so
        read-only."""
        return shared_strict_schema(self.args) if self.schema is None else self.schema

    async def invoke(self, arguments: str, ctx: ToolContext) -> ToolOutput:
        try:
            raw = parse_arguments(arguments)
        except ValueError as exc:
            return ToolOutput.error(f"invalid arguments for {self.name}: not a JSON object ({exc})")
        # Strict schemas make optional fields nullable; a null means "use the default".
        fields = self.args.model_fields
        raw = {
            k: v
            for k, v in raw.items()
            if not (v is None and k in fields and not fields[k].is_required())
        }
        try:
            parsed = self.args.model_validate(raw)
        except ValidationError as exc:
            return ToolOutput.error(_describe_validation_error(self.name, exc))
        return await self.handler(parsed, ctx)


class ToolRegistry:
    """An ordered set of tools. Order is registration order, so requests stay byte-stable."""

    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        self.version = 0
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        """Add `tool` at the end (appending keeps every earlier request's prefix valid)."""
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self.version += 1

    def replace(self, tool: Tool[Any]) -> None:
        """Swap the handler of a registered tool in place, keeping its position."""
        if tool.name not in self._tools:
            raise ValueError(f"tool {tool.name!r} is not registered")
        self._tools[tool.name] = tool
        self.version += 1

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def responses_tools(self) -> list[dict[str, Any]]:
        """Function tool specs in Responses-API form."""
        return [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters_schema(),
                "strict": t.strict,
            }
            for t in self._tools.values()
        ]

    def chat_tools(self) -> list[dict[str, Any]]:
        """Function tool specs in Chat Completions form."""
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters_schema(),
                    "strict": t.strict,
                },
            }
            for t in self._tools.values()
        ]

    async def dispatch(self, call: ToolCall, ctx: ToolContext) -> ToolOutput:
        """Run one call. Every problem becomes a failed output for the model, never a raise."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolOutput.error(f"unknown tool {call.name!r}; available tools: {known}")
        try:
            return await tool.invoke(call.arguments, ctx)
        except CorralError as exc:
            return ToolOutput.error(str(exc))
        except Exception as exc:  # the containment boundary for handler code
            logger.exception("tool %s failed", call.name)
            return ToolOutput.error(f"tool {call.name} failed: {type(exc).__name__}: {exc}")


def _describe_validation_error(name: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        problems.append(f"{where}: {err['msg']}")
    return f"invalid arguments for {name}: " + "; ".join(problems)


def parse_arguments(arguments: str) -> dict[str, Any]:
    """Decode a call's JSON arguments into a dict (empty on blank input)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except RecursionError:
        # The model writes them: nesting past json's limit is bad input, not a tool's crash.
        raise ValueError("the arguments nest too deeply to read") from None
    if not isinstance(value, dict):
        raise ValueError("tool arguments must be a JSON object")
    return value
