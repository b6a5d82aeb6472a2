"""A fan-out worker process's heartbeat and the parent's count of its silence.

The beats travel over a real socket pair between two ends in this test's event loop, as between
two processes. The parent's watch counts its own ticks, not the clock, so the counting is tested
on `Silence` itself; the real processes (a SIGSTOPped worker killed, a busy one spared) are in
`tests/e2e/test_fanout_processes.py`.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from pydantic import ValidationError

from corral.agents import CorralConfig
from corral.orchestrator._procs._heartbeat import (
    BEATS,
    Silence,
    beat_interval,
    send_beats,
    watch_silence,
)
from corral.orchestrator._procs._wire import Channel

pytestmark = pytest.mark.anyio
WAIT = 10.0
TINY = 0.001


@asynccontextmanager
async def channel_pair() -> AsyncIterator[tuple[Channel, Channel]]:
    ours, theirs = socket.socketpair()
    parent, worker = await Channel.from_socket(ours), await Channel.from_socket(theirs)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(parent.run)
            tg.start_soon(worker.run)
            yield parent, worker
            tg.cancel_scope.cancel()
    finally:
        with anyio.move_on_after(WAIT, shield=True):
            await worker.flush_and_close()
            await parent.flush_and_close()


@pytest.mark.parametrize("ticks", [1, BEATS, 3 * BEATS])
def test_a_worker_is_silent_only_after_the_limit_of_ticks_with_no_word(ticks: int) -> None:
    silence = Silence(ticks)
    assert not any(silence.tick() for _ in range(ticks - 1))
    assert silence.tick()


def test_any_word_from_the_worker_starts_the_count_again() -> None:
    silence = Silence()
    for _ in range(10):
        assert not any(silence.tick() for _ in range(BEATS - 1))
        silence.heard()
    assert not silence.tick()


def test_the_default_heartbeat_timeout_is_six_beats_of_five_seconds() -> None:
    timeout = CorralConfig().agents.fanout_heartbeat_timeout_sec
    assert (timeout, beat_interval(timeout)) == (30.0, 5.0)


@pytest.mark.parametrize("value", [0, 0.5, -1, 10_000])
def test_a_heartbeat_timeout_out_of_bounds_is_refused(value: float) -> None:
    with pytest.raises(ValidationError, match="fanout_heartbeat_timeout_sec"):
        CorralConfig.model_validate({"agents": {"fanout_heartbeat_timeout_sec": value}})


async def test_the_watch_ends_after_its_ticks_when_nothing_is_heard() -> None:
    silence = Silence()
    with anyio.fail_after(WAIT):
        await watch_silence(silence, TINY)
    assert silence.quiet == BEATS


async def test_a_worker_beats_while_its_item_waits_on_a_long_call() -> None:
    """A long tool call or model request leaves the loop free: the beats go on meanwhile."""
    heard = 0
    call_done = anyio.Event()

    async def long_call() -> None:
        with anyio.fail_after(WAIT):
            await call_done.wait()

    async with channel_pair() as (parent, worker), anyio.create_task_group() as tg:
        tg.start_soon(send_beats, worker, TINY)
        tg.start_soon(long_call)
        with anyio.fail_after(WAIT):
            async for message in parent.messages():
                assert message == {"op": "beat"}
                heard += 1
                if heard >= 3 * BEATS:
                    break
        assert not call_done.is_set(), "three timeouts' worth of beats during one call"
        call_done.set()
        tg.cancel_scope.cancel()
