"""Run leases in both stores: one live holder per run, takeover of a gone one, a lost lease stops.

A holder is gone when its pid no longer runs on this host or its heartbeat is older than its
timeout; a holder on another host with a fresh heartbeat is never second-guessed.
"""

from __future__ import annotations

import os
import subprocess
import time

import anyio
import pytest

from corral.agents._store import (
    LeaseRecord,
    RunLeaseHeld,
    Store,
    holder_gone,
    this_host,
)
from corral.orchestrator._lease import RunLeaseLost, hold_run_lease

pytestmark = pytest.mark.anyio

WAIT = 10
RUN = "run-1"


def lease(
    holder: str, *, at: float, pid: int | None = None, host: str | None = None
) -> LeaseRecord:
    return LeaseRecord(
        run_id=RUN,
        holder=holder,
        host=host or this_host(),
        pid=os.getpid() if pid is None else pid,
        since=at,
        heartbeat_at=at,
        timeout=30.0,
    )


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


async def test_a_live_holder_keeps_its_run_and_the_contender_is_told_who_has_it(
    store: Store,
) -> None:
    now = time.time()
    await store.take_lease(lease("lease-first", at=now))
    with pytest.raises(
        RunLeaseHeld, match=rf"run {RUN} is being carried on by lease-first \(pid {os.getpid()} on "
    ):
        await store.take_lease(lease("lease-second", at=now + 1))
    assert [x.holder for x in await store.leases(RUN)] == ["lease-first"]


@pytest.mark.parametrize(
    ("pid", "host", "later", "reason"),
    [
        ("dead", None, 1.0, "is no longer running"),
        ("self", "elsewhere", 31.0, "no heartbeat for 31 s"),
        ("self", None, 31.0, "no heartbeat for 31 s"),
    ],
    ids=["dead-pid-here", "silent-on-another-host", "silent-here"],
)
async def test_a_gone_holder_is_taken_over_with_a_note_saying_why(
    store: Store, pid: str, host: str | None, later: float, reason: str
) -> None:
    now = time.time()
    first_pid = dead_pid() if pid == "dead" else os.getpid()
    await store.take_lease(lease("lease-first", at=now, pid=first_pid, host=host))
    taken = await store.take_lease(lease("lease-second", at=now + later))
    assert taken.taken_from is not None
    assert taken.taken_from.startswith(f"lease-first (pid {first_pid} on ")
    assert reason in taken.taken_from
    first, second = await store.leases(RUN)
    assert (first.released_at, second.released_at) == (now + later, None)
    assert not await store.renew_lease(RUN, "lease-first", at=now + later + 1)


async def test_a_holder_on_another_host_is_not_judged_by_a_local_pid(store: Store) -> None:
    now = time.time()
    await store.take_lease(lease("lease-first", at=now, pid=dead_pid(), host="elsewhere"))
    with pytest.raises(RunLeaseHeld):
        await store.take_lease(lease("lease-second", at=now + 1))


async def test_a_released_lease_is_taken_without_a_takeover_note(store: Store) -> None:
    now = time.time()
    await store.take_lease(lease("lease-first", at=now))
    assert await store.renew_lease(RUN, "lease-first", at=now + 1)
    await store.release_lease(RUN, "lease-first", at=now + 2)
    taken = await store.take_lease(lease("lease-second", at=now + 3))
    assert taken.taken_from is None


def test_a_zombie_or_dead_pid_on_this_host_counts_as_gone() -> None:
    now = time.time()
    assert holder_gone(lease("x", at=now, pid=dead_pid()), now) is not None
    assert holder_gone(lease("x", at=now), now) is None


async def test_a_holder_whose_lease_was_taken_over_stops_its_run(store: Store) -> None:
    with pytest.raises(BaseExceptionGroup) as caught, anyio.fail_after(WAIT):
        async with hold_run_lease(store, RUN, interval=0.01) as held:
            # Another process, long after this one's last heartbeat, judges it silent.
            await store.take_lease(lease("lease-usurper", at=held.heartbeat_at + 60))
            await anyio.sleep_forever()
    assert caught.group_contains(RunLeaseLost, match="was taken over by another process")
    leases = await store.leases(RUN)
    assert [x.holder for x in leases if x.released_at is None] == ["lease-usurper"]


async def test_a_lease_is_released_when_its_run_ends(store: Store) -> None:
    async with hold_run_lease(store, RUN) as held:
        assert [x.holder for x in await store.leases(RUN)] == [held.holder]
    (ended,) = await store.leases(RUN)
    assert ended.released_at is not None
