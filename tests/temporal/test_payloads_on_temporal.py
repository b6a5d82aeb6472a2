"""Several megabytes through a run on Temporal: by reference, never inline in a history.

One fan-out item `cat`s a 3 MB file, so the output crosses Temporal as the tool batch's result
and again inside the next model request, whose model reports whether it arrived whole. Temporal
refuses payloads of 2 MiB, so the run only finishes if both went by reference.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.client import Client

from corral.agents import CorralConfig, ShellConfig
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import FanoutJob
from corral.orchestrator.temporal import (
    DEFAULT_PAYLOAD_THRESHOLD,
    ActivityPolicy,
    TemporalExecutor,
    TemporalSettings,
    connect,
)

from ._harness import WAIT, in_process_worker

pytestmark = pytest.mark.anyio

SIZE = 3 * 1024 * 1024
SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "intact": {"type": "boolean"}},
    "required": ["n", "intact"],
}
TEMPLATE = "Item {n}: cat big.txt, then report whether it printed all of it."
POLICY = ActivityPolicy(heartbeat_s=2.0, host_start_s=10.0)
NO_LIMIT = 10 * SIZE
"""Tokens: far more than the file holds, so neither truncation nor compaction sets in."""


def big_text() -> str:
    lines = (f"line {i:07d} of the big file\n" for i in range(SIZE // 28 + 1))
    return "".join(lines)[:SIZE]


TEXT = big_text()


def scripted(request: dict[str, Any]) -> Any:
    """`cat big.txt`, then `report_result` saying whether the output came whole, then a line."""
    done = [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]
    if not done:
        return [_call("shell", {"command": ["cat", "big.txt"]})]
    if len(done) == 1:
        return [_call("report_result", {"n": 0, "intact": TEXT in done[0]})]
    return "reported"


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}


def payloads_in(message: Message) -> Iterator[Payload]:
    """Every `Payload` anywhere inside `message`."""
    if isinstance(message, Payload):
        yield message
        return
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            values = list(value.values())
        elif field.is_repeated:
            values = list(value)
        else:
            values = [value]
        for inner in values:
            if isinstance(inner, Message):
                yield from payloads_in(inner)


async def history_payloads(client: Client, workflow_id: str) -> list[Payload]:
    """The payloads of the workflow's history and of every child workflow's below it."""
    found: list[Payload] = []
    todo = [workflow_id]
    while todo:
        history = await client.get_workflow_handle(todo.pop()).fetch_history()
        for event in history.events:
            found.extend(payloads_in(event))
            started = event.start_child_workflow_execution_initiated_event_attributes
            if started.workflow_id:
                todo.append(started.workflow_id)
    return found


async def test_a_tool_output_of_megabytes_goes_by_reference_and_comes_back_intact(
    temporal_address: str, tmp_path: Path
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.txt").write_text(TEXT)
    settings = TemporalSettings(address=temporal_address, blob_dir=home / "blobs")
    client = await connect(settings)
    async with serve_model_server(scripted) as model:
        config = CorralConfig(
            home=home,
            base_url=model.base_url,
            tool_output_token_limit=NO_LIMIT,
            model_context_window=NO_LIMIT,
            shell=ShellConfig(output_max_tokens=NO_LIMIT),
        )
        async with in_process_worker(client, config):
            with anyio.fail_after(WAIT):
                done = await TemporalExecutor(settings, POLICY, client).run_fanout(
                    config,
                    FanoutJob(
                        items=tuple([{"n": 0}]),
                        template=TEMPLATE,
                        result_schema=SCHEMA,
                        cwd=workspace,
                        run_id="run-big",
                    ),
                )
    (item,) = done.outcome.items
    assert item.status == "done"
    assert item.result == {"n": 0, "intact": True}, "the model was sent the whole output"

    payloads = await history_payloads(client, "run-big")
    references = [p for p in payloads if p.metadata.get("encoding") == b"json/corral-blob-ref"]
    assert len(references) >= 2, "the tool batch's result and the next request went by reference"
    biggest = max(p.ByteSize() for p in payloads)
    assert biggest < DEFAULT_PAYLOAD_THRESHOLD, f"a payload of {biggest} bytes is in a history"
    blobs = [p for p in (home / "blobs").rglob("*") if p.is_file()]
    assert blobs and max(b.stat().st_size for b in blobs) > SIZE
