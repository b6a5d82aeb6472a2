"""One live session with one MCP server, over stdio or streamable HTTP, in either protocol era.

`open_connection` starts the transport and negotiates the version the SDK's way (`mode="auto"`
asks `server/discover` and falls back to `initialize` for 2025-era servers). It watches for the
end of the session (the process exited, the event stream dropped) and for tool-list changes,
which arrive as `notifications/tools/list_changed` in both eras: unsolicited on the old one, on a
`subscriptions/listen` stream on the new one. Restarting and naming are the supervisor's job.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from types import TracebackType
from typing import Any, Literal, cast

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client import IncomingMessage
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types import RequestParamsMeta
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry import context as otel_context
from opentelemetry import propagate
from pydantic import ValidationError

from corral.agents import McpServerConfig

from ..._http_caps import cap_messages
from ._errors import McpConnectFailed
from ._stdio import StdioLaunch, StdioProcess, launch_environment, open_stdio_transport

logger = logging.getLogger(__name__)

ProtocolMode = Literal["auto", "legacy"]
CLIENT_INFO = types.Implementation(name="corral", version="0.1.0")
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
TRACE_KEYS = ("traceparent", "tracestate", "baggage")
"""The `_meta` keys the MCP spec reserves for W3C trace context (SEP-414)."""
LIST_PAGE_CAP = 100
"""At most this many `tools/list` pages: a server whose cursor never ends cannot hang us."""
MAX_TOOLS = 1000
"""The most tools one server's listing offers (the largest real servers list about 120): a
server that lists 100,000 would cost every index build and every request that carries them."""


class McpConnection:
    """A live session: calls, tool listings, and the signals of change and loss."""

    def __init__(self, process: StdioProcess | None) -> None:
        self.process = process
        self._client: Client | None = None
        self.lost = anyio.Event()
        self.lost_reason = ""
        self.list_changes = 0
        """How many `tools/list_changed` notices arrived; the supervisor refetches to catch up."""
        self.list_changed = anyio.Event()

    @property
    def client(self) -> Client:
        assert self._client is not None, "the connection is used only once it is open"
        return self._client

    @property
    def protocol_version(self) -> str:
        return self.client.protocol_version

    @property
    def announces_list_changes(self) -> bool:
        tools = self.client.server_capabilities.tools
        return bool(tools and tools.list_changed)

    def mark_lost(self, reason: str) -> None:
        if not self.lost.is_set():
            self.lost_reason = reason
            self.lost.set()

    def note_list_changed(self) -> None:
        self.list_changes += 1
        self.list_changed.set()

    async def on_message(self, message: IncomingMessage) -> None:
        # Counted before the first await: a notice that precedes a call's answer on the wire is
        # counted before that call returns (see `ServerSupervisor.call`).
        if isinstance(message, types.ToolListChangedNotification):
            self.note_list_changed()
        elif isinstance(message, Exception):
            logger.debug("mcp transport error: %r", message)

    async def list_tools(self, label: str = "") -> list[types.Tool]:
        """The server's tools, in its order, at most `MAX_TOOLS` of them (`label` names the
        server in the warning when it lists more)."""
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(LIST_PAGE_CAP):
            page = await self.client.list_tools(cursor=cursor, cache_mode="bypass")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None or len(tools) > MAX_TOOLS:
                break
        if len(tools) > MAX_TOOLS:
            logger.warning(
                "mcp server %s lists more than %d tools; only its first %d are offered",
                label,
                MAX_TOOLS,
                MAX_TOOLS,
            )
            del tools[MAX_TOOLS:]
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        trace: Mapping[str, str],
        on_progress: ProgressFnT | None = None,
    ) -> types.CallToolResult:
        """Call `name`; the W3C keys of `trace` go out in the request's `_meta`.

        The trace is also made the current OpenTelemetry context for the call, so the SDK's own
        client span (when tracing is on) joins that trace instead of replacing it. With
        `on_progress`, the request asks for progress notifications and each one is passed on.
        """
        carrier = {key: trace[key] for key in TRACE_KEYS if key in trace}
        token = otel_context.attach(propagate.extract(carrier)) if carrier else None
        try:
            meta = cast(RequestParamsMeta, carrier) if carrier else None
            return await self.client.call_tool(
                name, arguments, meta=meta, progress_callback=on_progress
            )
        finally:
            if token is not None:
                otel_context.detach(token)


class _Streams(AbstractAsyncContextManager[TransportStreams]):
    """Hands already-open streams to `Client`, which expects a transport to enter."""

    def __init__(self, streams: TransportStreams) -> None:
        self._streams = streams

    async def __aenter__(self) -> TransportStreams:
        return self._streams

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


@asynccontextmanager
async def open_connection(
    name: str,
    config: McpServerConfig,
    *,
    mode: ProtocolMode = "auto",
    on_process: Callable[[StdioProcess], None] | None = None,
) -> AsyncIterator[McpConnection]:
    """Connect to server `name` and keep watching it until the block ends.

    Raises `McpConnectFailed` with a message for people when the server cannot be started or
    reached, or fails the handshake. Time limits are the caller's; `on_process` hears of a
    stdio server's process as soon as it runs, so a caller whose deadline passes during the
    handshake can still say what the server wrote to stderr.
    """
    async with AsyncExitStack() as stack:
        process, streams = await _open_transport(stack, name, config)
        if process is not None and on_process is not None:
            on_process(process)
        connection = McpConnection(process)
        client = Client(
            _Streams(streams),
            mode=mode,
            cache=None,
            message_handler=connection.on_message,
            client_info=CLIENT_INFO,
        )
        try:
            await stack.enter_async_context(client)
        except Exception as exc:
            # The SDK's task group may wrap the error: a server that exits at once shows up as
            # "Connection closed" inside an exception group.
            leaf = _first_leaf(exc)
            if not isinstance(leaf, MCPError | anyio.BrokenResourceError | anyio.EndOfStream):
                raise
            raise McpConnectFailed(await _handshake_failure(leaf, process)) from exc
        connection._client = client
        if process is not None:
            process.graceful_close = True
        tg = await stack.enter_async_context(anyio.create_task_group())
        if process is not None:
            tg.start_soon(_watch_process, connection, process)
        modern = connection.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern and connection.announces_list_changes:
            tg.start_soon(_listen_for_changes, connection, name)
        try:
            yield connection
        finally:
            tg.cancel_scope.cancel()


async def _open_transport(
    stack: AsyncExitStack, name: str, config: McpServerConfig
) -> tuple[StdioProcess | None, TransportStreams]:
    if config.command is not None:
        launch = StdioLaunch(
            command=config.command,
            args=config.args,
            env=launch_environment(config.env, config.env_vars),
            cwd=config.cwd,
        )
        try:
            return await stack.enter_async_context(open_stdio_transport(launch, name))
        except FileNotFoundError as exc:
            raise McpConnectFailed(
                f"command {config.command!r} was not found; check `command` (and PATH)"
            ) from exc
        except OSError as exc:
            raise McpConnectFailed(f"could not start {config.command!r}: {exc}") from exc
    assert config.url is not None
    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers=http_headers(config), timeout=HTTP_TIMEOUT)
    )
    cap_messages(http, f"mcp server {name}")  # as `_stdio` caps a stdio server's lines
    streams = await stack.enter_async_context(streamable_http_client(config.url, http_client=http))
    return None, streams


def http_headers(
    config: McpServerConfig, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Static headers, those read from the environment, and the bearer token, in that order."""
    env = os.environ if environ is None else environ
    headers = dict(config.http_headers)
    for header, variable in config.env_http_headers.items():
        if variable in env:
            headers[header] = env[variable]
    if config.bearer_token_env_var is not None:
        token = env.get(config.bearer_token_env_var)
        if not token:
            raise McpConnectFailed(
                f"environment variable {config.bearer_token_env_var} "
                "(bearer_token_env_var) is not set; export it or remove the key"
            )
        headers["Authorization"] = f"Bearer {token}"
    return headers


async def _handshake_failure(exc: Exception, process: StdioProcess | None) -> str:
    if process is None:
        return f"the handshake failed: {exc}"
    with anyio.move_on_after(EXIT_GRACE_SEC):
        await process.closed.wait()
    if process.returncode is None:
        return f"the handshake failed: {exc}{stderr_said(process)}"
    return f"the server exited during startup ({process.exit_reason()}){stderr_said(process)}"


EXIT_GRACE_SEC = 2.0
"""How long a failed start waits for the server to exit, so its exit code and stderr are in."""
STDERR_LINES_SHOWN = 3


def stderr_said(process: StdioProcess | None) -> str:
    """The server's last stderr lines, as the tail of a failure message ("" when silent):
    a server that cannot start usually says why there, and nowhere else."""
    lines = process.stderr_tail().splitlines()[-STDERR_LINES_SHOWN:] if process else []
    return f"; its stderr ended with: {' | '.join(lines)}" if lines else ""


async def start_failure(reason: str, process: StdioProcess | None) -> str:
    """`reason` a server failed to start for, with how it exited and what it last said."""
    if process is None or "its stderr ended with" in reason:
        return reason
    with anyio.move_on_after(EXIT_GRACE_SEC):
        await process.closed.wait()
    ended = ""
    if process.returncode is not None and f"({process.exit_reason()})" not in reason:
        ended = f" ({process.exit_reason()})"  # not said twice when the reason already has it
    said = stderr_said(process)
    return f"{reason}{ended}{said if said not in reason else ''}"


async def _watch_process(connection: McpConnection, process: StdioProcess) -> None:
    await process.closed.wait()
    connection.mark_lost(process.exit_reason())


async def _listen_for_changes(connection: McpConnection, name: str) -> None:
    """Keep a `subscriptions/listen` stream open; its notices reach `on_message` like old ones."""
    try:
        async with connection.client.listen(tools_list_changed=True) as events:
            async for _ in events:
                pass
    except (MCPError, ListenNotSupportedError, TimeoutError) as exc:
        logger.info("mcp server %s: no tool-change stream (%s); changes need a restart", name, exc)
    except SubscriptionLost as exc:
        if connection.process is None:  # a stdio server's exit is reported with its exit code
            connection.mark_lost(f"its event stream dropped ({exc})")


TRANSPORT_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    httpx2.HTTPError,
    MCPError,
    ValidationError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)
"""What a failing server or link raises: reported in a line, without a traceback."""


def describe_failure(exc: BaseException, name: str) -> str:
    """Why a session with server `name` ended, for people; logs a traceback if unexpected."""
    leaf = _first_leaf(exc)
    if isinstance(leaf, McpConnectFailed):
        return str(leaf)
    if isinstance(leaf, MCPError):
        return f"the server answered with an error: {leaf} (code {leaf.code})"
    if isinstance(leaf, TRANSPORT_ERRORS):
        return f"its connection failed: {type(leaf).__name__}: {leaf}"
    logger.error("mcp server %s failed unexpectedly", name, exc_info=exc)
    return f"unexpected {type(leaf).__name__}: {leaf}"


def _first_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
