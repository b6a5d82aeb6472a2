"""Both SDK adapters over real HTTP against corral's scripted model server.

Every test goes through the real `openai` SDK and wire format; backoff sleeps are recorded
instead of slept, so retries cost no wall time.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import pytest
from anyio.abc import SocketAttribute, SocketStream

from corral.agents._items import FunctionCall, FunctionCallOutput, Item, Message, Reasoning, Usage
from corral.agents.model import (
    ItemDone,
    ModelConnectionRefused,
    ModelContextWindowExceeded,
    ModelRequest,
    ModelRequestRejected,
    ModelSettings,
    ModelUnavailable,
    Retrying,
    StreamEvent,
    TextDelta,
    open_model_client,
)
from corral.agents.model._types import ModelClient
from corral.orchestrator.model_server import ModelServerOptions, serve_model_server

Api = Literal["responses", "chat"]
APIS: list[Api] = ["responses", "chat"]
TEST_DEADLINE = 20
LONG_TEXT = "The answer, streamed in several pieces so the client has to join them."


class SleepRecorder:
    """Stands in for `anyio.sleep`: records each backoff instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@asynccontextmanager
async def open_client(
    base_url: str, api: Api, sleep: SleepRecorder, **settings: Any
) -> AsyncIterator[ModelClient]:
    resolved = ModelSettings.resolve(model="m-test", api=api, base_url=base_url, env={}, **settings)
    client = open_model_client(resolved, sleep=sleep)
    try:
        yield client
    finally:
        await client.aclose()


def ask(text: str = "hi", *, stream: bool = True, **fields: Any) -> ModelRequest:
    return ModelRequest(
        model="m-test",
        instructions="Be brief.",
        input=[Message(role="user", text=text)],
        stream=stream,
        **fields,
    )


def assistant(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def streamed_text(events: list[StreamEvent]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "blocking"])
@pytest.mark.parametrize("api", APIS)
async def test_text_answer_becomes_one_assistant_message_with_usage_mapped(
    api: Api, stream: bool
) -> None:
    usage = {"input_tokens": 120, "output_tokens": 30, "cached_tokens": 100, "reasoning_tokens": 12}
    events: list[StreamEvent] = []
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(
                lambda request: {"output": [assistant(LONG_TEXT)], "usage": usage}
            ) as server,
            open_client(server.base_url, api, SleepRecorder()) as client,
        ):
            response = await client.complete(ask(stream=stream), on_event=events.append)
    assert response.items == [Message(role="assistant", text=LONG_TEXT)]
    assert response.usage == Usage(
        input_tokens=120, output_tokens=30, cached_input_tokens=100, reasoning_tokens=12
    )
    assert response.attempts == 1
    assert streamed_text(events) == (LONG_TEXT if stream else "")
    assert events[-1] == ItemDone(Message(role="assistant", text=LONG_TEXT))


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_a_stream_nobody_watches_gives_the_same_response_as_a_watched_one(api: Api) -> None:
    call = {"type": "function_call", "call_id": "call_a", "name": "step", "arguments": "{}"}
    events: list[StreamEvent] = []
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: [assistant(LONG_TEXT), call]) as server,
            open_client(server.base_url, api, SleepRecorder()) as client,
        ):
            unwatched = await client.complete(ask())
            watched = await client.complete(ask(), on_event=events.append)
    assert unwatched.items == watched.items
    assert unwatched.items == [
        Message(role="assistant", text=LONG_TEXT),
        FunctionCall(call_id="call_a", name="step", arguments="{}"),
    ]
    assert unwatched.usage == watched.usage
    assert streamed_text(events) == LONG_TEXT  # the watcher still gets every delta


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "blocking"])
@pytest.mark.parametrize("api", APIS)
async def test_two_parallel_function_calls_keep_order_call_ids_and_arguments(
    api: Api, stream: bool
) -> None:
    long_arguments = json.dumps({"path": "src/" + "deep/" * 12 + "file.py", "limit": 40})
    calls = [
        {
            "type": "function_call",
            "call_id": "call_a",
            "name": "read_file",
            "arguments": long_arguments,
        },
        {
            "type": "function_call",
            "call_id": "call_b",
            "name": "list_dir",
            "arguments": '{"path": "."}',
        },
    ]
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: [assistant("Reading both."), *calls]) as server,
            open_client(server.base_url, api, SleepRecorder()) as client,
        ):
            response = await client.complete(ask(stream=stream))
    assert response.items == [
        Message(role="assistant", text="Reading both."),
        FunctionCall(call_id="call_a", name="read_file", arguments=long_arguments),
        FunctionCall(call_id="call_b", name="list_dir", arguments='{"path": "."}'),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "blocking"])
async def test_responses_reasoning_keeps_summary_and_encrypted_content(stream: bool) -> None:
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Check the file first."}],
        "encrypted_content": "gAAAA-opaque",
    }
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: [reasoning, assistant("Done.")]) as server,
            open_client(server.base_url, "responses", SleepRecorder()) as client,
        ):
            response = await client.complete(ask(stream=stream, reasoning_effort="low"))
            body = server.requests[0]["body"]
    assert response.items[0] == Reasoning(
        id="rs_1", summary="Check the file first.", encrypted_content="gAAAA-opaque"
    )
    assert body["reasoning"] == {"effort": "low"}
    assert body["include"] == ["reasoning.encrypted_content"]


@pytest.mark.anyio
@pytest.mark.parametrize("fault", ["500", "429", "disconnect"])
@pytest.mark.parametrize("api", APIS)
async def test_each_fault_kind_is_retried_to_success(api: Api, fault: str) -> None:
    sleep = SleepRecorder()
    events: list[StreamEvent] = []
    options = ModelServerOptions(fault_plan=(fault, "ok"), retry_after=0.01)
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: LONG_TEXT, options) as server,
            open_client(server.base_url, api, sleep) as client,
        ):
            response = await client.complete(ask(), on_event=events.append)
            requests = len(server.requests)
    assert response.items == [Message(role="assistant", text=LONG_TEXT)]
    assert response.attempts == 2
    assert requests == 2
    retries = [event for event in events if isinstance(event, Retrying)]
    assert [(r.attempt, r.delay) for r in retries] == [(1, sleep.delays[0])]
    if fault == "429":
        assert sleep.delays == [0.01]  # the server's retry-after, exactly
        assert retries[0].reason.startswith("HTTP 429: injected rate limit")
    elif fault == "500":
        assert len(sleep.delays) == 1 and 0.18 <= sleep.delays[0] <= 0.22
    else:
        assert sleep.delays == [0.0]  # a cut stream is no rate signal: retried at once
    if fault == "disconnect":
        # The connection was cut mid-stream: part of the text had already arrived.
        before_retry = streamed_text(events[: events.index(retries[0])])
        assert before_retry and LONG_TEXT.startswith(before_retry) and before_retry != LONG_TEXT
    # Deltas of the broken attempt were announced void by `Retrying`; the rest is whole.
    after_retry = events[events.index(retries[0]) + 1 :]
    assert streamed_text(after_retry) == LONG_TEXT


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_exhausted_retries_name_endpoint_attempts_and_last_status(api: Api) -> None:
    sleep = SleepRecorder()
    options = ModelServerOptions(fault_plan=("500",) * 5)
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: "never", options) as server,
            open_client(server.base_url, api, sleep, max_attempts=3) as client,
        ):
            with pytest.raises(ModelUnavailable) as caught:
                await client.complete(ask())
            requests = len(server.requests)
    error = caught.value
    assert re.fullmatch(
        rf"model call to {re.escape(server.base_url)} failed after 3 attempts over [0-9.]+ s: "
        r"last error HTTP 500: injected server error \(from --fault-plan or --fail-rate\)",
        str(error),
    )
    assert (error.attempts, error.last_status, requests) == (3, 500, 3)
    assert error.cause.startswith("HTTP 500")
    assert len(sleep.delays) == 2
    assert 0.18 <= sleep.delays[0] <= 0.22 and 0.36 <= sleep.delays[1] <= 0.44


@pytest.mark.anyio
async def test_stream_that_stalls_past_the_idle_timeout_is_retried_then_reported() -> None:
    options = ModelServerOptions(latency_ms=400)
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: "late", options) as server,
            open_client(
                server.base_url,
                "responses",
                SleepRecorder(),
                max_attempts=2,
                stream_idle_timeout=0.05,
            ) as client,
        ):
            with pytest.raises(
                ModelUnavailable,
                match=r"failed after 2 attempts over [0-9.]+ s: last error the request timed out",
            ):
                await client.complete(ask())


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_refused_connection_says_the_endpoint_refused_it(api: Api) -> None:
    sleep = SleepRecorder()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    with anyio.fail_after(TEST_DEADLINE):
        async with open_client(base_url, api, sleep, max_attempts=2) as client:
            with pytest.raises(ModelConnectionRefused) as caught:
                await client.complete(ask())
    assert str(caught.value) == (
        f"model endpoint {base_url} refused the connection on 2 attempts in a row: "
        "check that the model server is running and that the base URL is right"
    )
    assert caught.value.attempts == 2 and len(sleep.delays) == 1


@asynccontextmanager
async def serve_fixed_error(
    status: int, error: dict[str, Any]
) -> AsyncIterator[tuple[str, list[Any]]]:
    """A loopback HTTP server that answers every request with `status` and `{"error": error}`.

    The scripted model server injects 500, 429 and disconnects only; 4xx answers come from here.
    """
    bodies: list[Any] = []
    payload = json.dumps({"error": error}).encode()
    head = (
        f"HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\n"
        f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n"
    ).encode()

    async def answer(stream: SocketStream) -> None:
        async with stream:
            data = b""
            while b"\r\n\r\n" not in data:
                data += await stream.receive()
            header, _, body = data.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in header.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(body) < length:
                body += await stream.receive()
            bodies.append(json.loads(body))
            await stream.send(head + payload)

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, answer)
        yield f"http://127.0.0.1:{port}/v1", bodies
        group.cancel_scope.cancel()


REJECTIONS = [
    (
        400,
        {"message": "Unknown parameter: 'x'.", "code": "unknown_parameter"},
        ModelRequestRejected,
        "Unknown parameter: 'x'.",
    ),
    (
        401,
        {"message": "Incorrect API key provided.", "code": "invalid_api_key"},
        ModelRequestRejected,
        "check OPENAI_API_KEY",
    ),
    (
        400,
        {"message": "Input is too long.", "code": "context_length_exceeded"},
        ModelContextWindowExceeded,
        "compact the history",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("status", "error", "kind", "says"), REJECTIONS)
@pytest.mark.parametrize("api", APIS)
async def test_client_errors_fail_at_once_with_the_servers_message(
    api: Api, status: int, error: dict[str, Any], kind: type[Exception], says: str
) -> None:
    sleep = SleepRecorder()
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_fixed_error(status, error) as (base_url, bodies),
            open_client(base_url, api, sleep) as client,
        ):
            with pytest.raises(kind) as caught:
                await client.complete(ask())
    assert str(caught.value).startswith(
        f"model endpoint {base_url} rejected the request (HTTP {status}): "
    )
    assert says in str(caught.value)
    assert len(bodies) == 1 and sleep.delays == []


CONVERSATION: list[Item] = [
    Message(role="developer", text="Use the tools."),
    Message(role="user", text="What is in a.txt and b.txt?"),
    Message(role="assistant", text="Reading both."),
    FunctionCall(call_id="call_1", name="read_file", arguments='{"path": "a.txt"}'),
    FunctionCall(call_id="call_2", name="read_file", arguments='{"path": "b.txt"}'),
    FunctionCallOutput(call_id="call_1", output="alpha"),
    FunctionCallOutput(call_id="call_2", output="beta"),
    Message(role="assistant", text="a.txt says alpha."),
    FunctionCall(call_id="call_3", name="read_file", arguments='{"path": "c.txt"}'),
    FunctionCallOutput(call_id="call_3", output="gamma"),
]
READ_FILE_TOOL = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
    "strict": False,
}


@pytest.mark.anyio
async def test_chat_request_carries_the_same_conversation_as_the_responses_request() -> None:
    request = ModelRequest(
        model="m-test",
        instructions="You are a careful reader.",
        input=CONVERSATION,
        tools=[READ_FILE_TOOL],
        prompt_cache_key="thread-7",
        metadata={"run": "r-1"},
        stream=False,
    )
    with anyio.fail_after(TEST_DEADLINE):
        async with serve_model_server(lambda request: "ok") as server:
            for api in APIS:
                async with open_client(server.base_url, api, SleepRecorder()) as client:
                    await client.complete(request)
            responses_record, chat_record = server.requests
    assert chat_record["endpoint"] == "/v1/chat/completions"
    assert chat_record["normalised"] == responses_record["normalised"]
    assert chat_record["normalised"]["input"] == [item.to_wire() for item in CONVERSATION]
    messages = chat_record["body"]["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "developer",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
    ]
    assert messages[0]["content"] == "You are a careful reader."
    assert [call["id"] for call in messages[3]["tool_calls"]] == ["call_1", "call_2"]
    assert chat_record["body"]["prompt_cache_key"] == "thread-7"
    assert chat_record["body"]["metadata"] == {"run": "r-1"}
    assert chat_record["body"]["tools"][0]["function"]["name"] == "read_file"


@pytest.mark.anyio
async def test_requests_carry_the_api_key_as_a_bearer_token() -> None:
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: "ok") as server,
            open_client(
                server.base_url, "responses", SleepRecorder(), api_key="sk-test-1234"
            ) as client,
        ):
            await client.complete(ask())
            authorization = server.requests[0]["headers"]["authorization"]
    assert authorization.startswith("Bearer") and authorization.endswith("1234")


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_a_request_past_its_whole_deadline_is_retried_then_reported(stream: bool) -> None:
    options = ModelServerOptions(latency_ms=400)
    with anyio.fail_after(TEST_DEADLINE):
        async with (
            serve_model_server(lambda request: "late", options) as server,
            open_client(
                server.base_url, "responses", SleepRecorder(), max_attempts=2, request_timeout=0.05
            ) as client,
        ):
            with pytest.raises(ModelUnavailable) as caught:
                await client.complete(ask(stream=stream))
    assert "failed after 2 attempts" in str(caught.value)
    assert "no complete response within 0.05 s" in str(caught.value)
