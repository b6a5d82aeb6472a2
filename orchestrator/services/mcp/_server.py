"""One configured server over its whole life: start, serve calls, refetch tools, restart.

`ServerSupervisor.run` starts the server under `startup_timeout_sec` (a server that never
answers is `failed`, and is not retried: its command or URL needs fixing). Once it has been up,
a server that stops is `restarting`: tenacity retries it with exponential backoff and jitter, a
bounded number of attempts per incident, and calls made meanwhile get a clear error instead of
waiting. Tool lists go to the manager through `on_tools`; naming is the manager's job.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED
from pydantic import ValidationError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from corral.agents import McpServerConfig
from corral.tools import ToolOutput

from ._connection import (
    McpConnection,
    ProtocolMode,
    describe_failure,
    open_connection,
    start_failure,
    stderr_said,
)
from ._results import result_to_output
from ._stdio import StdioProcess

PROGRESS_CEILING = 10
"""Progress notifications extend a tool call to at most this many `tool_timeout_sec`."""
logger = logging.getLogger(__name__)

REFETCH_TIMEOUT_CAP_SEC = 30.0
"""A `tools/list` after a change notice may take the startup timeout, but at most this long."""


class ServerState(StrEnum):
    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"
    FAILED = "failed"
    DISABLED = "disabled"


@dataclass(frozen=True)
class RestartPolicy:
    """How a server that stopped is brought back: attempts per incident and the backoff."""

    attempts: int = 5
    initial_delay_sec: float = 0.5
    max_delay_sec: float = 30.0

    def retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential_jitter(
                multiplier=self.initial_delay_sec,
                max=self.max_delay_sec,
                jitter=self.initial_delay_sec,
            ),
            retry=retry_if_exception_type(_StartFailed),
            sleep=anyio.sleep,
            reraise=True,
        )


class _StartFailed(Exception):
    """One start attempt failed; the message says why, for people."""


class ServerSupervisor:
    """Keeps one server's session alive and serves calls on it."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        on_tools: Callable[[str, list[types.Tool]], None],
        on_state: Callable[[], None],
        restart: RestartPolicy,
        mode: ProtocolMode,
    ) -> None:
        self.name = name
        self.config = config
        self.state = ServerState.STARTING if config.enabled else ServerState.DISABLED
        self.error: str | None = None
        self.protocol_version: str | None = None
        self._stopped_because = ""
        self._connection: McpConnection | None = None
        self._refetched = 0
        self._refetched_event = anyio.Event()
        self._on_tools = on_tools
        self._on_state = on_state
        self._restart = restart
        self._mode = mode

    async def run(self, started: anyio.Event) -> None:
        """Start, then keep the server up until cancelled or out of restart attempts."""
        try:
            lost = await self._serve_once(started.set)
        except _StartFailed as exc:
            self._set_state(ServerState.FAILED, str(exc))
            started.set()
            return
        while True:
            logger.warning("mcp server %s stopped (%s); restarting it", self.name, lost)
            self._stopped_because = lost
            self._set_state(ServerState.RESTARTING, None)
            try:
                lost = await self._restarted()
            except _StartFailed as exc:
                self._set_state(
                    ServerState.FAILED,
                    f"stopped ({lost}) and did not come back after "
                    f"{self._restart.attempts} attempts: {exc}",
                )
                return

    async def _restarted(self) -> str:
        async for attempt in self._restart.retrying():
            with attempt:
                return await self._serve_once(lambda: None)
        raise AssertionError("unreachable: tenacity reraises the last failure")

    async def _serve_once(self, on_ready: Callable[[], None]) -> str:
        """Connect, list, serve until the session is lost; returns how it was lost.

        This is the containment boundary for the server and its transport: whatever they
        raise ends this session (a failed start, or a loss once it was up), never the manager.
        """
        timeout = self.config.startup_timeout_sec
        was_up = False
        started: list[StdioProcess] = []
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as startup:
            try:
                async with open_connection(
                    self.name, self.config, mode=self._mode, on_process=started.append
                ) as conn:
                    tools = await conn.list_tools(self.name)
                    startup.deadline = math.inf
                    was_up = True
                    return await self._serve(conn, tools, on_ready)
            except Exception as exc:
                reason = describe_failure(exc, self.name)
                if was_up:
                    return reason
                process = started[0] if started else None
                raise _StartFailed(await start_failure(reason, process)) from exc
        late = f"did not start within {timeout:g} s (startup_timeout_sec)"
        raise _StartFailed(late + stderr_said(started[0] if started else None))

    async def _serve(
        self, conn: McpConnection, tools: list[types.Tool], on_ready: Callable[[], None]
    ) -> str:
        self._connection = conn
        self.protocol_version = conn.protocol_version
        try:
            self._on_tools(self.name, tools)
            self._set_state(ServerState.READY, None)
            on_ready()
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._refetch_on_notice, conn)
                await conn.lost.wait()
                tg.cancel_scope.cancel()
            return conn.lost_reason
        finally:
            # Calls must see the loss at once, even while the transport is still closing.
            self._connection = None
            self._wake_settlers()
            if self.state is ServerState.READY:
                self._stopped_because = conn.lost_reason or "its connection failed"
                self._set_state(ServerState.RESTARTING, None)

    async def _refetch_on_notice(self, conn: McpConnection) -> None:
        timeout = min(self.config.startup_timeout_sec, REFETCH_TIMEOUT_CAP_SEC)
        while True:
            await conn.list_changed.wait()
            conn.list_changed = anyio.Event()
            target = conn.list_changes
            try:
                with anyio.fail_after(timeout):
                    tools = await conn.list_tools(self.name)
            except (MCPError, ValidationError, TimeoutError) as exc:
                logger.warning("mcp server %s: refetching tools failed: %s", self.name, exc)
            else:
                self._on_tools(self.name, tools)
            self._refetched = target
            self._wake_settlers()

    def _wake_settlers(self) -> None:
        event, self._refetched_event = self._refetched_event, anyio.Event()
        event.set()

    async def call(
        self, tool: str, exposed: str, arguments: dict[str, Any], trace: Mapping[str, str]
    ) -> ToolOutput:
        conn = self._connection
        if conn is None or conn.lost.is_set() or self.state is not ServerState.READY:
            return ToolOutput.error(self.unavailable_message())
        notices_before = conn.list_changes
        timeout = self.config.tool_timeout_sec
        try:
            result = await self._call_with_progress(conn, tool, arguments, trace)
        except TimeoutError:
            return ToolOutput.error(
                f"{exposed} timed out after {timeout:g} s without progress (tool_timeout_sec "
                f"of MCP server '{self.name}'); the server may still be working on it"
            )
        except MCPError as exc:
            return ToolOutput.error(self._call_failure(conn, tool, exc))
        except ValidationError as exc:
            return ToolOutput.error(
                f"MCP server '{self.name}' answered {tool} with a malformed result: {exc}"
            )
        await self._settle(conn, notices_before)
        return result_to_output(exposed, result)

    async def _call_with_progress(
        self, conn: McpConnection, tool: str, arguments: dict[str, Any], trace: Mapping[str, str]
    ) -> types.CallToolResult:
        """The call, under `tool_timeout_sec` counted from its last progress notification (a
        server working through a long job says so), never past `PROGRESS_CEILING` of them."""
        timeout = self.config.tool_timeout_sec
        ceiling = anyio.current_time() + timeout * PROGRESS_CEILING
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                scope.deadline = min(anyio.current_time() + timeout, ceiling)
                of = f"/{total:g}" if total is not None else ""
                said = f": {message}" if message else ""
                logger.info("mcp server %s: %s at %g%s%s", self.name, tool, progress, of, said)

            return await conn.call_tool(tool, arguments, trace, on_progress=on_progress)
        raise TimeoutError(tool)

    async def _settle(self, conn: McpConnection, notices_before: int) -> None:
        """If the server announced a tool change while answering, wait for the new list.

        Servers send the notice before the answer, so the agent's next request already carries
        the new tools.
        """
        await anyio.lowlevel.checkpoint()
        target = conn.list_changes
        if target == notices_before:
            return
        with anyio.move_on_after(min(self.config.startup_timeout_sec, REFETCH_TIMEOUT_CAP_SEC)):
            while self._refetched < target and self._connection is conn:
                await self._refetched_event.wait()

    def _call_failure(self, conn: McpConnection, tool: str, exc: MCPError) -> str:
        if exc.code == CONNECTION_CLOSED:
            if conn.process is None:
                conn.mark_lost(f"the connection closed ({exc})")
            return (
                f"MCP server '{self.name}' stopped while running {tool}; it is being restarted, "
                "so try again shortly (the call may or may not have taken effect)"
            )
        return f"MCP server '{self.name}' refused the call to {tool}: {exc} (code {exc.code})"

    def live_connection(self) -> McpConnection | None:
        """The session calls can use now; None while the server is not ready."""
        conn = self._connection
        if conn is None or conn.lost.is_set() or self.state is not ServerState.READY:
            return None
        return conn

    def unavailable_message(self) -> str:
        if self.state in (ServerState.RESTARTING, ServerState.READY):
            conn = self._connection
            why = conn.lost_reason if conn is not None and conn.lost.is_set() else None
            return (
                f"MCP server '{self.name}' is restarting after it stopped "
                f"({why or self._stopped_because}); try again shortly"
            )
        if self.state is ServerState.STARTING:
            return f"MCP server '{self.name}' is still starting; try again shortly"
        if self.state is ServerState.DISABLED:
            return f"MCP server '{self.name}' is disabled (enabled = false)"
        return f"MCP server '{self.name}' is not available: {self.error}"

    def _set_state(self, state: ServerState, error: str | None) -> None:
        self.state = state
        self.error = error
        if error is not None:
            logger.warning("mcp server %s %s: %s", self.name, state.value, error)
        self._on_state()
