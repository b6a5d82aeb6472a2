"""Injected faults, latency and the concurrency limit, as a client of the server sees them."""

from __future__ import annotations

import random
from typing import Any

import anyio
import httpx2
import openai
import pytest

from corral.orchestrator.model_server import FaultRates, ModelServerOptions, serve_model_server

DEADLINE = 10.0
LONG_ANSWER = "A streamed answer long enough to take several delta events to arrive. " * 3


def answer(request: dict[str, Any]) -> str:
    return LONG_ANSWER


def client_for(base_url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=base_url, api_key="test-key", max_retries=0, timeout=DEADLINE
    )


@pytest.mark.anyio
async def test_fault_plan_answers_429_with_retry_after_then_500_then_the_policy() -> None:
    options = ModelServerOptions(fault_plan=("429", "500", "ok"), retry_after=2.5)
    async with serve_model_server(answer, options) as server, client_for(server.base_url) as client:
        with anyio.fail_after(DEADLINE):
            with pytest.raises(openai.RateLimitError) as limited:
                await client.responses.create(model="scripted", input="hi")
            with pytest.raises(openai.InternalServerError) as failed:
                await client.responses.create(model="scripted", input="hi")
            response = await client.responses.create(model="scripted", input="hi")
    assert limited.value.response.headers["retry-after"] == "3"  # whole seconds, rounded up
    assert limited.value.response.headers["retry-after-ms"] == "2500"
    assert limited.value.code == "rate_limit_exceeded"
    assert "injected server error" in failed.value.message
    assert response.output_text == LONG_ANSWER
    assert [record["fault"] for record in server.requests] == ["rate_limited", "server_error", None]
    assert server.stats()["faults"] == {"server_error": 1, "rate_limited": 1, "disconnect": 0}


@pytest.mark.anyio
async def test_disconnect_cuts_a_responses_stream_before_completed_and_the_sdk_raises() -> None:
    options = ModelServerOptions(fault_plan=("disconnect",))
    seen: list[str] = []
    async with serve_model_server(answer, options) as server, client_for(server.base_url) as client:
        with anyio.fail_after(DEADLINE), pytest.raises(openai.APIConnectionError):
            stream = await client.responses.create(model="scripted", input="hi", stream=True)
            async for event in stream:
                seen.append(event.type)
    assert seen[:2] == ["response.created", "response.in_progress"]
    assert "response.output_text.delta" in seen
    assert "response.completed" not in seen


@pytest.mark.anyio
async def test_disconnect_cuts_a_chat_stream_before_done() -> None:
    options = ModelServerOptions(fault_plan=("disconnect",))
    body = {"model": "scripted", "messages": [{"role": "user", "content": "x"}], "stream": True}
    received: list[bytes] = []
    async with serve_model_server(answer, options) as server, httpx2.AsyncClient() as http:
        with anyio.fail_after(DEADLINE), pytest.raises(httpx2.RemoteProtocolError):
            async with http.stream(
                "POST", f"{server.base_url}/chat/completions", json=body
            ) as response:
                async for chunk in response.aiter_bytes():
                    received.append(chunk)
    text = b"".join(received).decode()
    assert '"object":"chat.completion.chunk"' in text
    assert "[DONE]" not in text
    assert '"finish_reason":"stop"' not in text


@pytest.mark.anyio
async def test_disconnect_on_a_plain_request_closes_the_connection_without_a_response() -> None:
    options = ModelServerOptions(fault_plan=("disconnect",))
    async with serve_model_server(answer, options) as server, httpx2.AsyncClient() as http:
        with anyio.fail_after(DEADLINE), pytest.raises(httpx2.RemoteProtocolError) as caught:
            await http.post(
                f"{server.base_url}/responses", json={"model": "scripted", "input": "hi"}
            )
    assert "without sending" in str(caught.value)


@pytest.mark.anyio
async def test_seeded_fault_rates_give_the_same_faults_on_every_run() -> None:
    rates = FaultRates(fail=0.25, ratelimit=0.25)
    runs = [
        await _statuses_of_ten_requests(ModelServerOptions(faults=rates, seed=7)) for _ in range(2)
    ]
    draws = random.Random(7)
    expected = []
    for _ in range(10):
        draw = draws.random()
        expected.append(500 if draw < 0.25 else 429 if draw < 0.5 else 200)
    assert runs[0] == runs[1] == expected
    assert {500, 429, 200} <= set(expected)


async def _statuses_of_ten_requests(options: ModelServerOptions) -> list[int]:
    body = {"model": "scripted", "input": "hi"}
    async with serve_model_server(answer, options) as server, httpx2.AsyncClient() as http:
        with anyio.fail_after(DEADLINE):
            return [
                (await http.post(f"{server.base_url}/responses", json=body)).status_code
                for _ in range(10)
            ]


@pytest.mark.anyio
async def test_fault_plan_comes_first_and_the_rates_follow_their_own_draws() -> None:
    options = ModelServerOptions(fault_plan=("ok", "ok"), faults=FaultRates(fail=1.0))
    async with serve_model_server(answer, options) as server, httpx2.AsyncClient() as http:
        with anyio.fail_after(DEADLINE):
            body = {"model": "scripted", "input": "hi"}
            statuses = [
                (await http.post(f"{server.base_url}/responses", json=body)).status_code
                for _ in range(3)
            ]
    assert statuses == [200, 200, 500]


@pytest.mark.anyio
async def test_max_concurrency_holds_requests_in_flight_to_the_limit() -> None:
    inside = 0
    highest = 0
    two_inside = anyio.Event()

    async def overlapping(request: dict[str, Any]) -> str:
        nonlocal inside, highest
        inside += 1
        highest = max(highest, inside)
        if inside == 2:
            two_inside.set()
        with anyio.fail_after(DEADLINE):
            await two_inside.wait()
        inside -= 1
        return "done"

    options = ModelServerOptions(max_concurrency=2, latency_ms=20)
    async with (
        serve_model_server(overlapping, options) as server,
        client_for(server.base_url) as client,
    ):

        async def ask() -> None:
            await client.responses.create(model="scripted", input="hi")

        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as group:
                for _ in range(6):
                    group.start_soon(ask)
        stats = server.stats()
    assert highest == 2
    assert stats["max_in_flight"] == 2
    assert stats["in_flight"] == 0
    assert stats["requests"]["total"] == 6
