"""The channel between a fan-out's parent and its worker processes against messages past what
a reader takes in one line: an item of any size can be in the items file (or a journal being
resumed). The parent refuses to send such an item, with an error that says how to carry the
run on, instead of ending every worker process it is dealt to in turn; a reader that meets an
overlong line anyway ends the channel quietly instead of raising out of its process."""

from __future__ import annotations

import socket

import anyio
import pytest

from corral.orchestrator._procs._wire import Channel, MessageTooLarge

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

LIMIT = 4096
WAIT = 10.0
OVERSIZED = {
    "one long string": {"op": "item", "record": {"input": {"text": "x" * LIMIT}}},
    "many small fields": {"op": "item", "record": {"input": {f"k{n}": n for n in range(600)}}},
    "escapes that grow when encoded": {"op": "item", "record": {"input": {"t": "\x00" * 800}}},
}


@pytest.mark.parametrize("message", OVERSIZED.values(), ids=OVERSIZED.keys())
async def test_a_message_past_the_readers_limit_is_refused_and_nothing_is_sent(
    message: dict[str, object],
) -> None:
    ours, theirs = socket.socketpair()
    sender = Channel(await anyio.abc.SocketStream.from_socket(ours), max_message_bytes=LIMIT)
    receiver = Channel(await anyio.abc.SocketStream.from_socket(theirs), max_message_bytes=LIMIT)
    try:
        with pytest.raises(MessageTooLarge, match="past the 4,096"):
            sender.post_checked(message)
        sender.post_checked({"op": "stop"})
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(sender.run)
                got = await anext(receiver.messages())
                tg.cancel_scope.cancel()
        assert got == {"op": "stop"}
    finally:
        await sender.flush_and_close()
        await receiver.flush_and_close()


@pytest.mark.parametrize("size", [LIMIT + 1, 10 * LIMIT])
async def test_a_reader_meeting_an_overlong_line_ends_the_channel_without_raising(
    size: int,
) -> None:
    ours, theirs = socket.socketpair()
    receiver = Channel(await anyio.abc.SocketStream.from_socket(theirs), max_message_bytes=LIMIT)
    try:
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:

                async def write() -> None:
                    with ours:
                        await anyio.to_thread.run_sync(ours.sendall, b'{"x":"' + b"y" * size)

                tg.start_soon(write)
                got = [message async for message in receiver.messages()]
        assert got == []
    finally:
        await receiver.flush_and_close()
