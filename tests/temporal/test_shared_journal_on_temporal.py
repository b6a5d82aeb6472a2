"""Two `corral worker` processes with homes of their own share one PostgreSQL journal: a third
home sees the whole run (`corral status`, the HTTP API's live event stream), payloads by
reference cross between them through the database, and a worker SIGKILLed mid-run loses nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import psycopg
import pytest

from corral.agents import CorralConfig
from corral.agents._store import open_journal
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import FanoutJob
from corral.orchestrator.service import (
    CorralClient,
    CorralService,
    ServerEvent,
    ServiceLimits,
    ServiceOptions,
)
from corral.orchestrator.temporal import TemporalExecutor, TemporalSettings, connect

from .test_fanout_on_temporal import POLICY, SCHEMA, TEMPLATE, KillAfterSome, claimed_hosts

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]

WAIT = 120.0
ITEMS = 50
RUN_ID = "run-shared"
THRESHOLD = 1024
"""Payloads from 1 KiB go by reference, so the run's input and results cross through blobs."""
TOKEN = "a-test-token-that-is-long-enough"
ROOT = Path(__file__).resolve().parents[2]


def home_of(tmp_path: Path, name: str) -> Path:
    """A `CORRAL_HOME` of its own, whose config sends payloads of 1 KiB by reference."""
    home = tmp_path / name / "home"
    home.mkdir(parents=True)
    (home / "config.toml").write_text(f"[temporal]\npayload_threshold_bytes = {THRESHOLD}\n")
    return home


def env_of(home: Path, journal: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORRAL_")}
    return {**env, "CORRAL_HOME": str(home), "CORRAL_JOURNAL_URL": journal, "PYTHONPATH": str(ROOT)}


@asynccontextmanager
async def worker(address: str, host: str, home: Path, journal: str) -> AsyncIterator[Any]:
    """A `corral worker` on `home` and the shared journal, once it polls its queues; what it
    logs is kept in `home/../worker.log` (read on, so a full pipe never stops it)."""
    argv = [sys.executable, "-m", "corral", "worker", "--temporal-address", address]
    argv += ["--host-name", host, "--max-concurrent", "8"]
    env = env_of(home, journal)
    async with (
        await anyio.open_process(argv, env=env, cwd=home.parent) as process,
        anyio.create_task_group() as tg,
    ):
        stderr = process.stderr
        assert stderr is not None
        polling = anyio.Event()

        async def keep_log() -> None:
            seen = b""
            async with await anyio.open_file(home.parent / "worker.log", "wb") as log:
                async for chunk in stderr:
                    seen += chunk
                    await log.write(chunk)
                    await log.flush()
                    if b"polling corral and corral-host-" in seen:
                        polling.set()

        tg.start_soon(keep_log)
        with anyio.fail_after(WAIT):
            await polling.wait()
        try:
            yield process
        finally:
            if process.returncode is None:
                process.terminate()
            with anyio.fail_after(WAIT):
                await process.wait()


@asynccontextmanager
async def api(home: Path, journal: str) -> AsyncIterator[CorralClient]:
    """`corral serve` on the third home and the shared journal; it executes nothing here."""
    options = ServiceOptions(
        home=home,
        token=TOKEN,
        journal=journal,
        port=0,
        limits=ServiceLimits(),
        env={"CORRAL_HOME": str(home), "CORRAL_JOURNAL_URL": journal},
    )
    async with anyio.create_task_group() as tg:
        url = await tg.start(CorralService(options).run)
        async with CorralClient(url, TOKEN) as client:
            yield client
        tg.cancel_scope.cancel()


async def follow_events(
    client: CorralClient, started: anyio.Event, into: list[ServerEvent]
) -> None:
    """The run's event stream, from once `started` says items have ended to the run's end."""
    with anyio.fail_after(WAIT):
        await started.wait()
        async for event in client.events(RUN_ID):
            into.append(event)


def corral_status(home: Path, journal: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "corral", "status", RUN_ID, "--json"],
        env=env_of(home, journal),
        cwd=home.parent,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    status: dict[str, Any] = json.loads(done.stdout)
    return status


def blob_refs(journal: str) -> list[str]:
    with psycopg.connect(journal, connect_timeout=10) as conn:
        rows = conn.execute("SELECT run_id FROM blob_refs").fetchall()
    return [row[0] for row in rows]


async def test_two_workers_share_one_postgres_journal_that_a_third_home_reads_whole(
    temporal_address: str, postgres_url: str, tmp_path: Path
) -> None:
    alpha_home, beta_home, third = (home_of(tmp_path, n) for n in ("alpha", "beta", "third"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    policy = KillAfterSome(finished=10)
    quick = POLICY.model_copy(update={"host_start_s": 3.0, "journal_timeout_s": 3.0})
    settings = TemporalSettings(
        address=temporal_address, payload_threshold_bytes=THRESHOLD, journal_url=postgres_url
    )
    executor = TemporalExecutor(settings, policy=quick)
    client = await connect(settings)
    streamed: list[ServerEvent] = []
    victim: list[str] = []
    async with (
        serve_model_server(policy) as model,
        worker(temporal_address, "alpha", alpha_home, postgres_url) as alpha,
        worker(temporal_address, "beta", beta_home, postgres_url) as beta,
        api(third, postgres_url) as http,
        anyio.create_task_group() as tg,
    ):

        async def kill_one_holding_items() -> None:
            with anyio.fail_after(WAIT):
                await policy.reached.wait()
            held = await claimed_hosts(client, RUN_ID, set(policy.held))
            name = "beta" if "beta" in held.values() else "alpha"
            victim.append(name)
            os.kill((beta if name == "beta" else alpha).pid, signal.SIGKILL)
            policy.killed.set()

        tg.start_soon(kill_one_holding_items)
        tg.start_soon(follow_events, http, policy.reached, streamed)
        config = CorralConfig.model_validate(
            {"home": third, "base_url": model.base_url, "journal": {"url": postgres_url}}
        )
        job = FanoutJob(
            items=tuple([{"n": n} for n in range(ITEMS)]),
            template=TEMPLATE,
            result_schema=SCHEMA,
            cwd=workspace,
            concurrency=10,
            run_id=RUN_ID,
        )
        with anyio.fail_after(WAIT):
            done = await executor.run_fanout(config, job)

    # The run finished every item, each with its own result, though a worker died mid-run.
    assert victim, "a worker was killed while it held items"
    assert [(i.index, i.status, i.result) for i in done.outcome.items] == [
        (n, "done", {"n": n}) for n in range(ITEMS)
    ]
    witness = [int(x) for x in (workspace / "witness.txt").read_text().split()]
    assert all(witness.count(n) == 1 for n in policy.ended), "no finished item ran its tool again"
    assert not policy.ended & policy.after_kill, "no item finished before the kill started over"

    # The third home sees every item and agent through `corral status`...
    status = await anyio.to_thread.run_sync(corral_status, third, postgres_url)
    assert status["run"]["status"] == "done"
    assert [(i["index"], i["status"]) for i in status["items"]] == [
        (n, "done") for n in range(ITEMS)
    ]
    item_agents = {i["agent_id"] for i in status["items"]}
    agents = {a["agent_id"]: a["status"] for a in status["agents"]}
    assert item_agents <= set(agents) and len(item_agents) == ITEMS
    assert {agents[a] for a in item_agents} == {"completed"}

    # ...and the API's event stream, followed live, holds every journaled event once, in order.
    journaled = [e for e in streamed if e.id is not None]
    async with open_journal(postgres_url) as store:
        truth = await store.run_events(RUN_ID)
        for agent_id in agents:
            seqs = [e.seq for e in await store.events(agent_id)]
            assert seqs == list(range(1, len(seqs) + 1)), "no event journaled twice"
    assert [(e.id, e.data["agent_id"], e.data["agent_seq"]) for e in journaled] == [
        (e.run_seq, e.agent_id, e.seq) for e in truth
    ]
    with_events = {e.agent_id for e in truth}
    assert {e.data["agent_id"] for e in journaled} == with_events
    # An agent whose host was killed before it journaled anything has only its record, closed.
    assert {agents[a] for a in set(agents) - with_events} <= {"interrupted"}
    assert (streamed[-1].event, streamed[-1].data["status"]) == ("end", "done")

    # Payloads by reference went to the shared database, referenced by the run; no home has any.
    assert set(blob_refs(postgres_url)) == {RUN_ID}
    for home in (alpha_home, beta_home, third):
        assert not (home / "blobs").exists(), home
