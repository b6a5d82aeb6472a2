"""The channel between a fan-out's parent process and one worker process: JSON lines over a
private socket pair.

Messages are small dicts with an `op`. `post` never waits: it queues the message and a writer
task sends everything queued in one write, so a worker's hot path (a budget charge, a permit
request) costs a list append, and many messages share one system call. The pair is made by the
parent before it starts the worker and handed to it as an inherited descriptor, so no other
process can reach the channel.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from corral.tools import OperationFailed

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""One line's limit: an item's input travels in one message."""
Message = dict[str, Any]


class ChannelClosed(Exception):
    """The other end of the channel went away (its process ended or closed it)."""


class MessageTooLarge(OperationFailed):
    """A message past what the other end reads in one line (`post_checked`)."""


class Channel:
    """One end of a parent-worker channel. Use `run` in a task group; `post` from anywhere."""

    def __init__(self, stream: SocketStream, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._stream = stream
        self.max_message_bytes = max_message_bytes
        self._reader = BufferedByteReceiveStream(stream)
        # Unbounded on purpose: posting must never block a turn, and what is queued is bounded
        # by the turns in flight (each posts a few messages before it waits for an answer).
        self._outbox: list[bytes] = []
        self._ready = anyio.Event()
        self._closed = False

    @classmethod
    async def from_socket(cls, sock: socket.socket) -> Channel:
        return cls(await SocketStream.from_socket(sock))

    def post(self, message: Message) -> None:
        """Queue `message` for the writer; dropped silently once the channel is closed."""
        if self._closed:
            return
        self._outbox.append(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self._ready.set()

    def post_checked(self, message: Message) -> None:
        """`post`, but raise `MessageTooLarge` (nothing queued) for a message the other end
        could not read: an item of any size can be in a fan-out's file."""
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        if len(line) > self.max_message_bytes:
            raise MessageTooLarge(
                f"a message of {len(line):,} bytes is past the {self.max_message_bytes:,} that "
                "a worker process reads"
            )
        if not self._closed:
            self._outbox.append(line)
            self._ready.set()

    async def run(self) -> None:
        """Send what is posted until the channel is closed; returns when it is."""
        while not self._closed:
            await self._ready.wait()
            self._ready = anyio.Event()
            batch, self._outbox = b"".join(self._outbox), []
            if batch:
                try:
                    await self._stream.send(batch)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    self._closed = True

    async def messages(self) -> AsyncIterator[Message]:
        """Each message received, until the other end closes the channel."""
        while True:
            try:
                line = await self._reader.receive_until(b"\n", self.max_message_bytes)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            except (anyio.IncompleteRead, anyio.DelimiterNotFound):
                # A line past the limit cannot be skipped reliably: the channel is done.
                return
            decoded = json.loads(line)
            if isinstance(decoded, dict):
                yield decoded

    async def flush_and_close(self) -> None:
        """Send what is still queued, then close; bounded by the caller's deadline."""
        batch, self._outbox = b"".join(self._outbox), []
        self._closed = True
        self._ready.set()
        try:
            if batch:
                await self._stream.send(batch)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            await self._stream.aclose()
