"""Run ids come from requests and the command line: whatever a run is called, appending to its
journal never fails for the notification, and its followers are still woken."""

from __future__ import annotations

import anyio
import pytest

from corral.agents._store import open_journal
from corral.orchestrator.service._wakeups import open_wakeups
from tests._journal import seed_agent

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

WAIT = 30.0

RUN_IDS = [
    "run-'); SELECT pg_sleep(10); --",
    'run-"quoted"',
    "run-\nwith-a-newline",
    "run-ünïcødé-✓",
    "run-" + "x" * 5000,  # longer than a NOTIFY payload may be
    "run-" + "é" * 3000,  # short in characters, long in bytes
]


@pytest.mark.parametrize("run_id", RUN_IDS, ids=lambda r: f"{r[:12]!r}+{len(r)}")
async def test_an_append_to_a_run_with_any_id_succeeds_and_wakes_its_followers(
    postgres_url: str, run_id: str
) -> None:
    async with open_journal(postgres_url) as store, open_wakeups(postgres_url) as wakeups:
        await seed_agent(store, "agent-1", run_id)
        woken = wakeups.waiter(run_id)
        event = await store.append_event("agent-1", "note", {"n": 1}, at=1.0)
        with anyio.fail_after(WAIT):
            await woken.wait()
    assert event.run_seq == 1
