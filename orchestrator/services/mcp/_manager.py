"""`McpManager`: every configured MCP server of the process, shared by all of its agents.

One supervisor per enabled server, all under the manager's one task group. The manager names
each server tool once (`mcp__<server>__<tool>`), turns it into a corral `Tool`, and keeps tool
registries up to date when a server's list changes: new tools are appended, changed ones
replaced in place, and a tool that went away stays registered but answers that it is no longer
offered, so request prefixes stay stable. `version` counts tool changes; `changed` fires on
any change of tools or server state.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskStatus
from opentelemetry import trace
from pydantic import BaseModel, ConfigDict

from corral.agents import CorralConfig, McpServerConfig
from corral.tools import Tool, ToolContext, ToolOutput, ToolRegistry

from ._approvals import approval_reason, refusal_unless_approved
from ._connection import McpConnection, ProtocolMode
from ._errors import McpConfigInvalid, McpStartupFailed, McpUnavailable
from ._names import NameBook
from ._schema import sanitize_input_schema
from ._server import RestartPolicy, ServerState, ServerSupervisor

logger = logging.getLogger(__name__)

TraceContext = Callable[[], Mapping[str, str]]
"""Returns the caller's W3C trace headers (`traceparent`, `tracestate`) for the current call."""
STARTUP_MARGIN_SEC = 10.0
"""Beyond the longest `startup_timeout_sec`, how long `run` waits for the last server's verdict."""


def no_trace_context() -> Mapping[str, str]:
    return {}


class McpArguments(BaseModel):
    """Whatever the model sends: the server validates against its own schema."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class McpServerStatus:
    """What `corral mcp list` shows for one server."""

    name: str
    state: ServerState
    transport: str
    tools: tuple[str, ...]
    error: str | None = None
    protocol_version: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "state": self.state.value,
            "transport": self.transport,
            "tools": list(self.tools),
        }
        if self.error is not None:
            data["error"] = self.error
        if self.protocol_version is not None:
            data["protocol_version"] = self.protocol_version
        return data


@dataclass(frozen=True)
class OfferedTool:
    """One tool a server offers: corral's tool, the server, and the server's name for it."""

    tool: Tool[McpArguments]
    server: str
    raw_name: str


@dataclass
class _Exposed:
    server: str
    tool: str
    spec: Tool[McpArguments]
    offered: bool = True
    hints: types.ToolAnnotations | None = None


class McpManager:
    """The process's MCP servers and their tools. Start it with `run` or `open_mcp_manager`."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        trace_context: TraceContext = no_trace_context,
        restart: RestartPolicy | None = None,
        mode: ProtocolMode = "auto",
        enforce_required: bool = True,
    ) -> None:
        _check_names(servers)
        self._enforce_required = enforce_required
        self._configs = dict(servers)
        self._trace_context = trace_context
        self._book = NameBook(servers)
        self._exposed: dict[str, _Exposed] = {}
        self._supervisors = {
            name: ServerSupervisor(
                name,
                config,
                on_tools=self._apply_tools,
                on_state=self._signal,
                restart=restart or RestartPolicy(),
                mode=mode,
            )
            for name, config in sorted(servers.items())
        }
        self._registries: weakref.WeakSet[ToolRegistry] = weakref.WeakSet()
        self._changed = anyio.Event()
        self.version = 0
        self._running = False

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start every enabled server at once; `started` once each is up or has failed.

        Raises `McpStartupFailed` if a `required` server failed (unless `enforce_required` is
        off, as for `corral mcp list`, which reports it instead). Runs until cancelled.
        """
        if self._running:
            raise RuntimeError("this McpManager is already running")
        self._running = True
        failure: McpStartupFailed | None = None
        async with anyio.create_task_group() as tg:
            await self._start_all(tg)
            failure = self._required_failure()
            if failure is not None:
                tg.cancel_scope.cancel()
            else:
                task_status.started()
                await anyio.sleep_forever()
        if failure is not None:
            raise failure

    async def _start_all(self, tg: anyio.abc.TaskGroup) -> None:
        enabled = [s for s in self._supervisors.values() if s.config.enabled]
        events = [anyio.Event() for _ in enabled]
        for supervisor, event in zip(enabled, events, strict=True):
            tg.start_soon(supervisor.run, event, name=f"mcp server {supervisor.name}")
        longest = max((s.config.startup_timeout_sec for s in enabled), default=0.0)
        with anyio.fail_after(longest + STARTUP_MARGIN_SEC):
            for event in events:
                await event.wait()

    def _required_failure(self) -> McpStartupFailed | None:
        failed = [
            s
            for s in self._supervisors.values()
            if s.config.required and s.state is ServerState.FAILED
        ]
        if not failed or not self._enforce_required:
            return None
        reasons = "; ".join(f"'{s.name}': {s.error}" for s in failed)
        return McpStartupFailed(
            f"required MCP server(s) did not start: {reasons}. Fix the server or set "
            "`required = false` to run without it"
        )

    # -- tools -------------------------------------------------------------------------------

    @property
    def tools(self) -> list[Tool[McpArguments]]:
        """Every exposed tool (servers by name, then tools by name), including withdrawn ones."""
        ordered = sorted(self._exposed.values(), key=lambda e: (e.server, e.tool))
        return [entry.spec for entry in ordered]

    def offered(self) -> list[OfferedTool]:
        """The tools servers offer now, with each one's server and the server's own name."""
        ordered = sorted(self._exposed.values(), key=lambda e: (e.server, e.tool))
        return [OfferedTool(e.spec, e.server, e.tool) for e in ordered if e.offered]

    def sync_registry(self, registry: ToolRegistry) -> None:
        """Bring `registry` up to date: new tools appended, changed ones replaced in place."""
        for tool in self.tools:
            current = registry.get(tool.name)
            if current is None:
                registry.register(tool)
            elif current is not tool:
                registry.replace(tool)

    def attach(self, registry: ToolRegistry) -> None:
        """Sync `registry` now and after every change, until it is garbage-collected."""
        self._registries.add(registry)
        self.sync_registry(registry)

    def _apply_tools(self, server: str, listed: list[types.Tool]) -> None:
        config = self._configs[server]
        offered = {t.name: t for t in listed if _is_enabled(config, t.name)}
        names = self._book.names_for(server, offered)
        changed = False
        for tool_name, exposed in names.items():
            changed |= self._expose(server, offered[tool_name], exposed)
        for entry in self._exposed.values():
            if entry.server == server and entry.offered and entry.tool not in offered:
                entry.offered = False
                changed = True
                logger.info("mcp server %s no longer offers %s", server, entry.tool)
        if changed:
            self.version += 1
            for registry in list(self._registries):
                self.sync_registry(registry)
            self._signal()

    def _expose(self, server: str, listed: types.Tool, exposed: str) -> bool:
        spec = self._tool_spec(server, listed, exposed)
        entry = self._exposed.get(exposed)
        if entry is None:
            self._exposed[exposed] = _Exposed(server, listed.name, spec, hints=listed.annotations)
            return True
        entry.hints = listed.annotations
        same = (
            entry.spec.description == spec.description
            and entry.spec.schema == spec.schema
            and entry.spec.parallel == spec.parallel
            and entry.spec.side_effects == spec.side_effects
        )
        if same and entry.offered:
            return False
        entry.offered = True
        if not same:
            entry.spec = spec
        return True

    def _tool_spec(self, server: str, listed: types.Tool, exposed: str) -> Tool[McpArguments]:
        description = listed.description or listed.title or f"{listed.name} (MCP server {server})"
        return Tool(
            name=exposed,
            description=description,
            args=McpArguments,
            handler=self._handler(exposed),
            mutating=True,
            parallel=bool(getattr(self._configs[server], "supports_parallel_tool_calls", False)),
            schema=sanitize_input_schema(listed.input_schema),
            side_effects=not _read_only(listed),
        )

    def _handler(self, exposed: str) -> Callable[[McpArguments, ToolContext], Any]:
        async def handle(args: McpArguments, ctx: ToolContext) -> ToolOutput:
            arguments = dict(args.model_extra or {})
            refusal = await self._approve(exposed, arguments, ctx)
            return refusal or await self.call(exposed, arguments)

        return handle

    async def _approve(
        self, exposed: str, arguments: dict[str, Any], ctx: ToolContext
    ) -> ToolOutput | None:
        """None when an agent's call may go ahead (`_approvals`), else the refusal."""
        entry = self._exposed.get(exposed)
        if entry is None:
            return None  # `call` says it is unknown
        mode = self._configs[entry.server].approval_mode(entry.tool)
        reason = approval_reason(mode, entry.hints, ctx.profile.approval)
        if reason is None:
            return None
        return await refusal_unless_approved(ctx, exposed, arguments, reason)

    async def call(self, exposed: str, arguments: dict[str, Any]) -> ToolOutput:
        """Call an exposed tool by its exposed name (what the tools' handlers do)."""
        entry = self._exposed.get(exposed)
        if entry is None:
            return ToolOutput.error(f"no MCP tool is exposed as {exposed}")
        if not entry.offered:
            return ToolOutput.error(
                f"tool {exposed} is no longer offered by MCP server '{entry.server}'"
            )
        supervisor = self._supervisors[entry.server]
        _describe_call(entry.server, entry.tool, supervisor.protocol_version)
        return await supervisor.call(entry.tool, exposed, arguments, self._trace_context())

    # -- sessions (resources) ------------------------------------------------------------------

    def server_names(self) -> list[str]:
        """The enabled servers, by name."""
        return [name for name, s in self._supervisors.items() if s.config.enabled]

    def session(self, server: str) -> tuple[McpConnection, float]:
        """The live session of `server` and its call timeout; a clear error otherwise."""
        supervisor = self._supervisors.get(server)
        if supervisor is None or not supervisor.config.enabled:
            known = ", ".join(self.server_names()) or "none"
            raise McpConfigInvalid(f"no MCP server is named {server!r}; servers: {known}")
        conn = supervisor.live_connection()
        if conn is None:
            raise McpUnavailable(supervisor.unavailable_message())
        return conn, supervisor.config.tool_timeout_sec

    # -- state -------------------------------------------------------------------------------

    def statuses(self) -> list[McpServerStatus]:
        """Every configured server, by name."""
        return [self.status(name) for name in self._supervisors]

    def status(self, server: str) -> McpServerStatus:
        supervisor = self._supervisors.get(server)
        if supervisor is None:
            known = ", ".join(self._supervisors) or "none"
            raise McpConfigInvalid(f"no MCP server is named {server!r}; configured: {known}")
        tools = tuple(
            spec.name
            for spec in self.tools
            if self._exposed[spec.name].server == server and self._exposed[spec.name].offered
        )
        return McpServerStatus(
            name=server,
            state=supervisor.state,
            transport=supervisor.config.transport,
            tools=tools,
            error=supervisor.error,
            protocol_version=supervisor.protocol_version,
        )

    @property
    def changed(self) -> anyio.Event:
        """Set at the next change of tools or server state (then a fresh event takes over)."""
        return self._changed

    async def wait_until(self, condition: Callable[[], bool]) -> None:
        """Wait until `condition()` holds, checking after every change (put a deadline on it)."""
        while not condition():
            await self._changed.wait()

    def _signal(self) -> None:
        event, self._changed = self._changed, anyio.Event()
        event.set()


def _describe_call(server: str, tool: str, protocol_version: str | None) -> None:
    """Put the MCP attributes on the span of the tool call under way (corral's `execute_tool`,
    when tracing is on); the SDK's own client span below it carries the JSON-RPC request id."""
    span = trace.get_current_span()
    if not span.is_recording():
        return
    span.set_attribute("mcp.method.name", "tools/call")
    span.set_attribute("corral.mcp.server", server)
    span.set_attribute("corral.mcp.tool", tool)
    span.set_attribute("gen_ai.tool.type", "extension")
    if protocol_version:
        span.set_attribute("mcp.protocol.version", protocol_version)


def _read_only(listed: types.Tool) -> bool:
    """Whether the server declares the tool read-only (and not destructive): a resumed agent
    then runs an interrupted call of it again instead of reporting its outcome unknown."""
    hints = listed.annotations
    if hints is None:
        return False
    return hints.read_only_hint is True and hints.destructive_hint is not True


def _is_enabled(config: McpServerConfig, tool: str) -> bool:
    allowed = config.enabled_tools is None or tool in config.enabled_tools
    return allowed and tool not in config.disabled_tools


def _check_names(servers: Mapping[str, McpServerConfig]) -> None:
    for name in servers:
        if not name.strip():
            raise McpConfigInvalid("an [mcp_servers] table has an empty name; give it a name")


@asynccontextmanager
async def open_mcp_manager(
    config: CorralConfig | Mapping[str, McpServerConfig],
    *,
    trace_context: TraceContext = no_trace_context,
    restart: RestartPolicy | None = None,
    mode: ProtocolMode = "auto",
    enforce_required: bool = True,
) -> AsyncIterator[McpManager]:
    """Start the configured servers, yield the manager once each is up or failed, stop them.

    Raises `McpStartupFailed` when a `required` server did not start (see `McpManager.run`).
    """
    servers = config.mcp_servers if isinstance(config, CorralConfig) else config
    manager = McpManager(
        servers,
        trace_context=trace_context,
        restart=restart,
        mode=mode,
        enforce_required=enforce_required,
    )
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            try:
                yield manager
            finally:
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The documented startup failure comes out alone, not wrapped by the task group.
        if len(group.exceptions) == 1 and isinstance(group.exceptions[0], McpStartupFailed):
            raise group.exceptions[0] from None
        raise
