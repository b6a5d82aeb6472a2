"""The adapters' `AttemptGate` seam: every HTTP attempt, retries included, passes the gate once
and reports its status, the server's Retry-After and, on success, the usage total.

Real adapters talk to the scripted model server over HTTP; the gate is the in-memory
`RecordingGate`, and backoff sleeps are recorded instead of slept.
"""

from __future__ import annotations

import socket
from typing import Any, Literal

import anyio
import pytest

from corral.agents._items import Message
from corral.agents.model import (
    ModelClient,
    ModelConnectionRefused,
    ModelRequest,
    ModelRequestRejected,
    ModelSettings,
    RecordingGate,
    Retrying,
    StreamEvent,
    estimate_tokens,
    open_model_client,
)
from corral.orchestrator.model_server import ModelServerOptions, serve_model_server

Api = Literal["responses", "chat"]
TEST_DEADLINE = 20
USAGE = {"input_tokens": 120, "output_tokens": 30}


async def no_sleep(delay: float) -> None:
    del delay


def client_for(base_url: str, api: Api, gate: RecordingGate, **settings: Any) -> ModelClient:
    resolved = ModelSettings.resolve(model="m-test", api=api, base_url=base_url, env={}, **settings)
    return open_model_client(resolved, sleep=no_sleep, gate=gate)


def ask(text: str = "hi") -> ModelRequest:
    return ModelRequest(
        model="m-test", instructions="Be brief.", input=[Message(role="user", text=text)]
    )


def answer(request: dict[str, Any]) -> dict[str, Any]:
    return {"output": [{"type": "message", "content": "Done."}], "usage": USAGE}


@pytest.mark.anyio
@pytest.mark.parametrize("api", ["responses", "chat"])
async def test_gate_sees_every_attempt_with_its_status_retry_after_and_usage(api: Api) -> None:
    gate = RecordingGate()
    events: list[StreamEvent] = []
    options = ModelServerOptions(fault_plan=("429", "500", "disconnect", "ok"), retry_after=0.05)
    with anyio.fail_after(TEST_DEADLINE):
        async with serve_model_server(answer, options) as server:
            client = client_for(server.base_url, api, gate)
            try:
                response = await client.complete(ask(), on_event=events.append)
            finally:
                await client.aclose()
    seen = [(a.status, a.retry_after, a.usage_tokens) for a in gate.attempts]
    assert seen == [(429, 0.05, None), (500, None, None), (None, None, None), (200, None, 150)]
    assert all(attempt.reported for attempt in gate.attempts)
    assert len({attempt.estimated_tokens for attempt in gate.attempts}) == 1
    assert gate.open == 0
    assert response.attempts == 4
    retries = [(e.status, e.retry_after) for e in events if isinstance(e, Retrying)]
    assert retries == [(429, 0.05), (500, None), (None, None)]


@pytest.mark.anyio
async def test_estimate_is_the_body_size_over_four_plus_an_output_allowance() -> None:
    gate = RecordingGate()
    request = ask("x" * 40_000)
    with anyio.fail_after(TEST_DEADLINE):
        async with serve_model_server(answer) as server:
            client = client_for(server.base_url, "responses", gate)
            try:
                await client.complete(request)
            finally:
                await client.aclose()
    [attempt] = gate.attempts
    assert attempt.estimated_tokens == estimate_tokens(request.to_responses_body())
    assert 10_000 + 512 <= attempt.estimated_tokens < 10_000 + 512 + 100


@pytest.mark.anyio
async def test_a_rejected_request_is_reported_once_with_its_status() -> None:
    gate = RecordingGate()
    with anyio.fail_after(TEST_DEADLINE):
        async with serve_model_server(answer) as server:
            client = client_for(server.base_url + "/no-such-api", "chat", gate)
            try:
                with pytest.raises(ModelRequestRejected):
                    await client.complete(ask())
            finally:
                await client.aclose()
    assert [(a.status, a.usage_tokens) for a in gate.attempts] == [(404, None)]


@pytest.mark.anyio
async def test_refused_connections_are_reported_without_a_status() -> None:
    gate = RecordingGate()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = client_for(f"http://127.0.0.1:{port}/v1", "responses", gate, max_attempts=2)
    with anyio.fail_after(TEST_DEADLINE):
        try:
            with pytest.raises(ModelConnectionRefused):
                await client.complete(ask())
        finally:
            await client.aclose()
    assert [(a.reported, a.status) for a in gate.attempts] == [(True, None), (True, None)]
