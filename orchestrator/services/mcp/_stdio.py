"""A stdio transport that keeps hold of the server process: its pid, exit code and stderr.

The SDK's `stdio_client` hides its process, but the manager must tell a crash from a clean close
and say how the server ended ("exit code -9") and what it last wrote to stderr. Messages are
newline-delimited JSON-RPC, as the SDK's transport sends them. Closing follows the spec: close
stdin, give the server a moment, then end its whole process group.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter

logger = logging.getLogger(__name__)

# What a server inherits from corral's environment unless `env_vars` names more (Codex's list).
INHERITED_ENV_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR")
EXIT_GRACE_SEC = 2.0
"""How long a server may take to exit on its own once its stdin is closed."""
TERMINATE_GRACE_SEC = 2.0
"""How long after SIGTERM before the process group is killed."""
EXIT_CODE_WAIT_SEC = 2.0
"""How long to wait for the exit code once the server's stdout has closed."""
STDERR_TAIL_LINES = 20
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The longest line a server may write on stdout (one JSON-RPC message); a longer one is dropped
as it arrives, so a server that never ends its line cannot grow corral without bound."""
MAX_STDERR_LINE_BYTES = 64 * 1024
"""The longest stderr line kept for the error messages; a longer one is noted, not kept."""


@dataclass(frozen=True)
class StdioLaunch:
    """What to run: the command, its arguments, its whole environment and its folder."""

    command: str
    args: Sequence[str]
    env: Mapping[str, str]
    cwd: Path | None = None


def launch_environment(env: Mapping[str, str], pass_through: Sequence[str]) -> dict[str, str]:
    """The inherited basics, the variables `env_vars` names, then `env` on top."""
    names = (*INHERITED_ENV_VARS, *pass_through)
    inherited = {name: os.environ[name] for name in names if name in os.environ}
    return inherited | dict(env)


class StdioProcess:
    """A running server: its pid, and once it has gone, how it ended and what it last said."""

    def __init__(self, process: Process) -> None:
        self._process = process
        self.closed = anyio.Event()
        """Set once the server's stdout has closed and its exit code is known (or waited for)."""
        self.graceful_close = False
        """Whether closing may give the server time to exit (only once it has answered)."""
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    def exit_reason(self) -> str:
        code = self._process.returncode
        return "its output closed" if code is None else f"exit code {code}"

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def last_stderr_line(self) -> str | None:
        return self._stderr[-1] if self._stderr else None

    def record_stderr(self, line: str) -> None:
        self._stderr.append(line)


@asynccontextmanager
async def open_stdio_transport(
    launch: StdioLaunch, label: str
) -> AsyncIterator[tuple[StdioProcess, TransportStreams]]:
    """Spawn the server and bridge its pipes to the SDK's message streams.

    Raises `OSError` (e.g. `FileNotFoundError`) when the command cannot be started.
    """
    process = await _spawn(launch)
    handle = StdioProcess(process)
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def pump_stdout() -> None:
        assert process.stdout is not None
        async with read_send:
            await _forward_lines(process.stdout, read_send, label)
        with anyio.move_on_after(EXIT_CODE_WAIT_SEC):
            await process.wait()
        handle.closed.set()

    async def pump_stdin() -> None:
        assert process.stdin is not None
        try:
            async with write_receive:
                async for message in write_receive:
                    line = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((line + "\n").encode())
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            # The server stopped reading: end the session rather than let a request hang.
            await read_send.aclose()

    async def pump_stderr() -> None:
        assert process.stderr is not None
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            async for line in read_lines(process.stderr, MAX_STDERR_LINE_BYTES):
                line = _overlong(MAX_STDERR_LINE_BYTES) if line is None else line
                handle.record_stderr(line)
                logger.debug("mcp server %s: %s", label, line)

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump_stdout)
        tg.start_soon(pump_stdin)
        tg.start_soon(pump_stderr)
        try:
            yield handle, (read_receive, write_send)
        finally:
            with anyio.CancelScope(shield=True):
                await write_send.aclose()
                await read_receive.aclose()
                await _stop(process, graceful=handle.graceful_close)
            tg.cancel_scope.cancel()


async def _spawn(launch: StdioLaunch) -> Process:
    return await anyio.open_process(
        [launch.command, *launch.args],
        env=dict(launch.env),
        cwd=launch.cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


async def read_lines(stream: ByteReceiveStream, limit: int) -> AsyncIterator[str | None]:
    """Each line of `stream` as text, without its line end; None in place of a line longer
    than `limit` bytes, whose bytes are dropped as they come. Each byte is looked at once."""
    pending = bytearray()
    overlong = False
    async for chunk in stream:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            piece = chunk[start:end]
            start = end + 1
            if overlong or len(pending) + len(piece) > limit:
                yield None
            else:
                pending += piece
                yield _text(pending)
            pending.clear()
            overlong = False
        rest = chunk[start:]
        if overlong or len(pending) + len(rest) > limit:
            overlong = True
            pending.clear()
        else:
            pending += rest
    if overlong:
        yield None
    elif pending:
        yield _text(pending)


def _text(line: bytearray) -> str:
    # Split at the byte: a newline byte is never part of a longer UTF-8 sequence.
    return line.decode("utf-8", "replace").removesuffix("\r")


def _overlong(limit: int) -> str:
    return f"(a line longer than {limit:,} bytes, not kept)"


async def _forward_lines(
    stdout: ByteReceiveStream,
    send: MemoryObjectSendStream[SessionMessage | Exception],
    label: str,
) -> None:
    try:
        async for line in read_lines(stdout, MAX_MESSAGE_BYTES):
            if line is None:
                logger.warning(
                    "mcp server %s wrote a line longer than %d MiB; it was dropped",
                    label,
                    MAX_MESSAGE_BYTES // 2**20,
                )
                await send.send(ValueError(_overlong(MAX_MESSAGE_BYTES)))
                continue
            if not line.strip():
                continue
            try:
                item: SessionMessage | Exception = SessionMessage(
                    jsonrpc_message_adapter.validate_json(line, by_name=False)
                )
            except ValueError as exc:
                logger.warning(
                    "mcp server %s wrote a line that is not JSON-RPC: %.200s", label, line
                )
                item = exc
            await send.send(item)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        return


async def _stop(process: Process, *, graceful: bool) -> None:
    """Close stdin and wait a little (if `graceful`), then end the whole process group."""
    if process.returncode is None and graceful:
        if process.stdin is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.stdin.aclose()
        with anyio.move_on_after(EXIT_GRACE_SEC):
            await process.wait()
    if process.returncode is None:
        if graceful:
            await terminate_posix_process_tree(process, TERMINATE_GRACE_SEC)
        else:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
    with anyio.move_on_after(EXIT_CODE_WAIT_SEC):
        await process.wait()
        await process.aclose()
