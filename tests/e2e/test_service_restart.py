"""`corral serve` killed with SIGKILL mid-run and started again: the run completes.

Six items run two at a time; items 2 and 3 stall at their first model request, so when the server
is killed two items have reported, two are in flight and two have not started. The second server
carries the run on through the journal's resume: every item reports exactly once, and the event
stream's ids continue where the first server's stopped.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.service import CorralClient, ServerEvent

from ..service._harness import SCHEMA, TEMPLATE, TOKEN, Gate, item_of, outputs
from ._cli import corral_argv, corral_env

pytestmark = pytest.mark.anyio

WAIT = 30.0
ITEMS = 6
HELD = {2, 3}
LISTENING = "corral serve: listening on "


class CountingGate(Gate):
    """The harness's gate, counting the results each item reports.

    `journaled` is set once items 0 and 1 sent the request that follows their report: by then
    the report's result is in the journal, so a kill cannot make them report twice.
    """

    def __init__(self) -> None:
        super().__init__(HELD, expect=len(HELD))
        self.reports: Counter[int] = Counter()
        self.followed: set[int] = set()
        self.journaled = anyio.Event()

    async def __call__(self, request: dict[str, Any]) -> Any:
        item = item_of(request)
        if outputs(request):
            self.followed.add(item)
            if self.followed >= {0, 1}:
                self.journaled.set()
        # A request stalled here was sent by the killed server: its answer reaches no one.
        stalled = item in HELD and not self.opened.is_set()
        answer = await super().__call__(request)
        if not outputs(request) and not stalled:
            self.reports[item] += 1
        return answer


@asynccontextmanager
async def corral_serve(
    home: Path, cwd: Path, model_url: str
) -> AsyncIterator[tuple[anyio.abc.Process, str]]:
    # The scripted model is the server's own endpoint: requests may only name that one.
    env = corral_env(home, model_url, CORRAL_API_TOKEN=TOKEN)
    argv = corral_argv("serve", "--port", "0")
    async with await anyio.open_process(argv, env=env, cwd=cwd, start_new_session=True) as server:
        assert server.stderr is not None
        lines = BufferedByteReceiveStream(server.stderr)
        with anyio.fail_after(WAIT):
            line = (await lines.receive_until(b"\n", 10_000)).decode()
            while not line.startswith(LISTENING):
                line = (await lines.receive_until(b"\n", 10_000)).decode()
        try:
            yield server, line.removeprefix(LISTENING).strip()
        finally:
            if server.returncode is None:
                os.killpg(server.pid, signal.SIGKILL)
            with anyio.fail_after(WAIT):
                await server.wait()


async def collect(
    client: CorralClient,
    run_id: str,
    after: int,
    into: list[ServerEvent],
    numbered: anyio.Event | None = None,
) -> None:
    """The run's events after `after` into `into`; `numbered` is set at the first with an id."""
    async for event in client.events(run_id, starting_after=after):
        into.append(event)
        if numbered is not None and event.id is not None:
            numbered.set()


async def test_a_run_carries_on_after_the_server_is_killed_with_every_item_done_once(
    tmp_path: Path,
) -> None:
    gate = CountingGate()
    home = tmp_path / "home"
    before: list[ServerEvent] = []
    after: list[ServerEvent] = []
    async with serve_model_server(gate) as model:
        request = {
            "kind": "fanout",
            "items": [{"n": n} for n in range(ITEMS)],
            "template": TEMPLATE,
            "schema": SCHEMA,
            "concurrency": 2,
            "base_url": model.base_url,
            "cd": str(tmp_path),
        }
        async with (
            corral_serve(home, tmp_path, model.base_url) as (server, url),
            CorralClient(url, TOKEN) as client,
            anyio.create_task_group() as tg,
        ):
            run_id = (await client.submit(request, idempotency_key="nightly"))["id"]
            numbered = anyio.Event()
            tg.start_soon(collect, client, run_id, 0, before, numbered)
            with anyio.fail_after(WAIT):
                await gate.journaled.wait()
                await gate.reached.wait()
                await numbered.wait()  # the client has read some of the stream: it resumes later
                seen = list(before)
                os.killpg(server.pid, signal.SIGKILL)
                await server.wait()
            tg.cancel_scope.cancel()
        reported_before_kill = set(gate.reports)
        gate.release()
        last_seen = max((e.id for e in seen if e.id is not None), default=0)

        async with (
            corral_serve(home, tmp_path, model.base_url) as (server, url),
            CorralClient(url, TOKEN) as client,
        ):
            with anyio.fail_after(WAIT):
                await collect(client, run_id, last_seen, after)
                everything: list[ServerEvent] = []
                await collect(client, run_id, 0, everything)
            again = await client.submit(request, idempotency_key="nightly")
            results = await client.results(run_id)
            run = await client.get(run_id)

    assert reported_before_kill == {0, 1} and last_seen > 0
    assert gate.reports == Counter(dict.fromkeys(range(ITEMS), 1))
    assert [r["result"] for r in results] == [{"n": n * 10} for n in range(ITEMS)]
    assert run["status"] == "done" and run["items"] == {"done": ITEMS}
    assert again["id"] == run_id
    ids = [e.id for e in everything if e.id is not None]
    assert ids == list(range(1, len(ids) + 1))
    resumed_ids = [e.id for e in after if e.id is not None]
    assert resumed_ids == ids[last_seen:]
    journaled = {e.id: (e.event, e.data) for e in everything if e.id is not None}
    assert all(journaled[e.id] == (e.event, e.data) for e in seen if e.id is not None)
    assert (after[-1].event, after[-1].data["status"]) == ("end", "done")
