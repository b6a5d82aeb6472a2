"""Heartbeating from inside an activity while a block of its work runs.

A host activity that misses heartbeats is taken for a dead host (its item restarts elsewhere),
so any work that may take longer than the heartbeat timeout runs inside `heartbeating()`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from temporalio import activity


@asynccontextmanager
async def heartbeating() -> AsyncIterator[None]:
    """Heartbeat at half the activity's heartbeat timeout while the block runs."""
    timeout = activity.info().heartbeat_timeout
    if timeout is None:
        yield
        return
    every = timeout.total_seconds() / 2

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await anyio.sleep(every)

    async with anyio.create_task_group() as tg:
        tg.start_soon(beat)
        try:
            yield
        finally:
            tg.cancel_scope.cancel()
