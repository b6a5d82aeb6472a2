"""stdin for the stdio transport, read by a daemon thread, so SIGTERM ends the server at once.

The SDK's own reader keeps a worker thread in `readline`, and cancelling the server waits for
that thread: a server told to stop (SIGTERM, Ctrl-C) went on until the client sent its next line
or closed stdin. Here a daemon thread reads and hands each line to the event loop; a cancelled
server stops at once, and the thread, still blocked in `read`, ends with the process. It reads
bytes, not text lines, so a line past the size cap is dropped as it comes (`_lines`). As the SDK
does, fd 0 points at the null device while serving, so no child process reads the client's
messages; it is restored on exit.
"""

from __future__ import annotations

import concurrent.futures
import fcntl
import os
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._errors import McpServerOptionsError
from ._lines import LineSplitter

STDIN = 0
READ_CHUNK = 1 << 20


@asynccontextmanager
async def claimed_stdin() -> AsyncIterator[MemoryObjectReceiveStream[str]]:
    """The lines the client sends on stdin, until it closes it."""
    if not _stdin_is_open():  # else fd 0 may be a file of this process's, not to be diverted
        raise McpServerOptionsError(
            "stdin is closed; start corral mcp-server from an MCP client, or pass --http"
        )
    private = fcntl.fcntl(STDIN, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, STDIN)
    os.close(null)
    send, receive = anyio.create_memory_object_stream[str](0)
    token = anyio.lowlevel.current_token()
    reader = threading.Thread(
        target=_read_lines, args=(private, send, token), name="corral-mcp-stdin", daemon=True
    )
    reader.start()
    try:
        async with receive:
            yield receive
    finally:
        # `private` stays open: the thread may still be blocked reading it.
        os.dup2(private, STDIN)


def _stdin_is_open() -> bool:
    """Whether fd 0 is the stdin this process was started with (Python sets `sys.stdin` to None
    when it was closed then)."""
    try:
        return sys.stdin is not None and sys.stdin.fileno() == STDIN
    except (OSError, ValueError):
        return False


def _read_lines(
    fd: int, send: MemoryObjectSendStream[str], token: anyio.lowlevel.EventLoopToken
) -> None:
    """Hand each line read from `fd` to the loop; stop when the client or the server is gone."""
    lines = LineSplitter()
    try:
        while chunk := _read(fd):
            for line in lines.feed(chunk):
                anyio.from_thread.run(send.send, line, token=token)
        for line in lines.end():
            anyio.from_thread.run(send.send, line, token=token)
        anyio.from_thread.run(send.aclose, token=token)
    except (
        anyio.BrokenResourceError,
        anyio.ClosedResourceError,
        concurrent.futures.CancelledError,
        RuntimeError,  # the event loop has ended
    ):
        return


def _read(fd: int) -> bytes:
    """The next bytes the client sent; none once it closed stdin (or it can no longer be read)."""
    try:
        return os.read(fd, READ_CHUNK)
    except OSError:
        return b""
