"""One owner per run: the lease a process holds on a run while it carries it on.

`hold_run_lease` takes the run's lease in the journal (refused with `RunLeaseHeld` while another
live process holds it; taken over, with a note, when that process is gone), beats it every
`HEARTBEAT_INTERVAL` seconds from its own task, and releases it on the way out. A holder that
finds its lease gone (it stalled past the timeout and another process took over) stops the run:
two processes must never carry one run on at once.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio

from corral.agents import Store
from corral.agents._store import JournalFailed, LeaseRecord, this_host
from corral.tools import OperationFailed

HEARTBEAT_INTERVAL: Final = 5.0
"""Seconds between two heartbeats of a held lease."""
LEASE_TIMEOUT: Final = 30.0
"""A lease with no heartbeat for this long is taken over, whatever its host says."""
RELEASE_TIMEOUT: Final = 5.0

logger = logging.getLogger(__name__)


class RunLeaseLost(OperationFailed):
    """Another process took this run's lease over while this one still ran it."""


@asynccontextmanager
async def hold_run_lease(
    store: Store,
    run_id: str,
    *,
    interval: float = HEARTBEAT_INTERVAL,
    lease_timeout: float = LEASE_TIMEOUT,
) -> AsyncIterator[LeaseRecord]:
    """Hold run `run_id`'s lease for the block; raises `RunLeaseHeld` if a live process has it."""
    now = time.time()
    wanted = LeaseRecord(
        run_id=run_id,
        holder=f"lease-{uuid.uuid4().hex[:12]}",
        host=this_host(),
        pid=os.getpid(),
        since=now,
        heartbeat_at=now,
        timeout=lease_timeout,
    )
    lease = await store.take_lease(wanted)
    if lease.taken_from is not None:
        logger.warning("run %s: taken over from %s", run_id, lease.taken_from)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_beat, store, lease, interval)
            yield lease
            tg.cancel_scope.cancel()
    finally:
        with anyio.move_on_after(RELEASE_TIMEOUT, shield=True):
            await store.release_lease(run_id, lease.holder, at=time.time())


async def _beat(store: Store, lease: LeaseRecord, interval: float) -> None:
    while True:
        await anyio.sleep(interval)
        try:
            held = await store.renew_lease(lease.run_id, lease.holder, at=time.time())
        except JournalFailed as exc:
            # A journal locked for a while is not a lost lease; the next beat tries again.
            logger.warning("run %s: lease heartbeat failed: %s", lease.run_id, exc)
            continue
        if not held:
            raise RunLeaseLost(
                f"run {lease.run_id} was taken over by another process while this one ran it "
                f"(no heartbeat was journaled for {lease.timeout:.0f} s); this process stops, "
                "`corral status` shows who holds it now"
            )
