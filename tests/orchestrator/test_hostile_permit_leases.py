"""A worker's kept permits against the order its parent's words arrive in: a `revoke` read in
the same batch as the `grant` before it (the parent stopped lending right after granting) must
still end the lease. Were the grant's `keep` applied only when the waiting attempt resumed, it
would undo the revoke: the worker would keep permits the parent asked back, and every attempt of
the other processes would wait behind them until its wait timed out."""

from __future__ import annotations

import socket

import anyio
import pytest

from corral.orchestrator._procs._permits import PermitClient
from corral.orchestrator._procs._wire import Channel
from corral.orchestrator._ratelimit._limiter import MAX_LEASE

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]
URL = "http://127.0.0.1:9/v1"
WAIT = 10.0


@pytest.mark.parametrize("attempts", [1, 2, 5])
async def test_a_revoke_read_right_after_a_grant_leaves_no_permit_kept(attempts: int) -> None:
    ours, theirs = socket.socketpair()
    channel = await Channel.from_socket(ours)
    try:
        client = PermitClient(channel)
        gate = client.gate_for(URL)
        ended = 0

        async def attempt() -> None:
            nonlocal ended
            async with gate.attempt(10):
                pass
            ended += 1

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                for _ in range(attempts):
                    tg.start_soon(attempt)
                await anyio.wait_all_tasks_blocked()
                # The parent's words, read in one batch before any waiting attempt resumes.
                for number in range(1, attempts + 1):
                    client.answer({"op": "grant", "id": number, "keep": MAX_LEASE})
                client.answer({"op": "revoke", "endpoint": URL})
        assert ended == attempts
        assert gate.kept == []
        assert gate.keep == 0
    finally:
        await channel.flush_and_close()
        theirs.close()
