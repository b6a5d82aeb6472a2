"""The scripted model server speaks both OpenAI APIs as the real `openai` SDK parses them."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import anyio
import anyio.lowlevel
import httpx2
import openai
import pytest

from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.model_server.examples import tool_then_answer

DEADLINE = 10.0
WEATHER_TOOL: Any = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
CHAT_WEATHER_TOOL: Any = {
    "type": "function",
    "function": {k: v for k, v in WEATHER_TOOL.items() if k != "type"},
}


def text_and_two_calls(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Checking both cities now."}],
        },
        {
            "type": "function_call",
            "call_id": "call_a",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {
            "type": "function_call",
            "call_id": "call_b",
            "name": "get_weather",
            "arguments": {"city": "Oslo"},
        },
    ]


async def async_hello(request: dict[str, Any]) -> str:
    await anyio.lowlevel.checkpoint()
    return "hello from an async policy"


def client_for(base_url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=base_url, api_key="test-key", max_retries=0, timeout=DEADLINE
    )


@pytest.mark.anyio
async def test_responses_stream_sends_every_event_in_order_and_completes_with_usage() -> None:
    async with (
        serve_model_server(text_and_two_calls) as server,
        client_for(server.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            stream = await client.responses.create(
                model="scripted",
                input="weather?",
                tools=[WEATHER_TOOL],
                stream=True,
            )
            events = [event async for event in stream]
    kinds = [event.type for event in events]
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds[-1] == "response.completed"
    for kind in (
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
    ):
        assert kind in kinds
    assert [event.sequence_number for event in events] == list(range(len(events)))
    completed = events[-1].response  # type: ignore[union-attr]
    assert completed.output_text == "Checking both cities now."
    assert completed.usage is not None
    assert completed.usage.input_tokens_details.cached_tokens == 0
    assert completed.usage.output_tokens_details.reasoning_tokens == 0
    assert completed.usage.output_tokens > 0


@pytest.mark.anyio
async def test_responses_stream_helper_accumulates_text_and_two_parallel_calls() -> None:
    async with (
        serve_model_server(text_and_two_calls) as server,
        client_for(server.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            async with client.responses.stream(
                model="scripted",
                input="weather?",
                tools=[WEATHER_TOOL],
            ) as stream:
                final = await stream.get_final_response()
    calls = [item for item in final.output if item.type == "function_call"]
    assert final.output_text == "Checking both cities now."
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "get_weather", {"city": "Oslo"}),
    ]


@pytest.mark.anyio
async def test_responses_without_stream_returns_the_whole_response_from_an_async_policy() -> None:
    async with serve_model_server(async_hello) as server, client_for(server.base_url) as client:
        with anyio.fail_after(DEADLINE):
            response = await client.responses.create(
                model="scripted", input="hi", instructions="Be brief."
            )
    assert response.status == "completed"
    assert response.output_text == "hello from an async policy"
    assert response.instructions == "Be brief."
    assert response.usage is not None and response.usage.input_tokens > 0


@pytest.mark.anyio
async def test_chat_stream_carries_indexed_tool_call_deltas_finish_reason_usage_and_done() -> None:
    async with (
        serve_model_server(text_and_two_calls) as server,
        client_for(server.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            stream = await client.chat.completions.create(
                model="scripted",
                messages=[{"role": "user", "content": "weather?"}],
                tools=[CHAT_WEATHER_TOOL],
                stream=True,
                stream_options={"include_usage": True},
            )
            chunks = [chunk async for chunk in stream]
            raw = await _raw_chat_stream(server.base_url)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
    arguments: dict[int, str] = {}
    for delta in deltas:
        assert delta.function is not None
        arguments[delta.index] = arguments.get(delta.index, "") + (delta.function.arguments or "")
    assert text == "Checking both cities now."
    assert [d.id for d in deltas if d.id] == ["call_a", "call_b"]
    assert {i: json.loads(a) for i, a in arguments.items()} == {
        0: {"city": "Paris"},
        1: {"city": "Oslo"},
    }
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert raw.endswith("data: [DONE]\n\n")


async def _raw_chat_stream(base_url: str) -> str:
    body = {"model": "scripted", "messages": [{"role": "user", "content": "x"}], "stream": True}
    async with httpx2.AsyncClient(timeout=DEADLINE) as http:
        response = await http.post(f"{base_url}/chat/completions", json=body)
    return response.text


@pytest.mark.anyio
async def test_chat_stream_helper_and_plain_completion_both_parse_two_tool_calls() -> None:
    messages: list[Any] = [{"role": "user", "content": "weather?"}]
    async with (
        serve_model_server(text_and_two_calls) as server,
        client_for(server.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            plain = await client.chat.completions.create(model="scripted", messages=messages)
            async with client.chat.completions.stream(
                model="scripted", messages=messages
            ) as stream:
                streamed = await stream.get_final_completion()
    for completion in (plain, streamed):
        message = completion.choices[0].message
        assert message.content == "Checking both cities now."
        assert [call.id for call in message.tool_calls or []] == ["call_a", "call_b"]
        assert completion.choices[0].finish_reason == "tool_calls"
    assert plain.usage is not None and plain.usage.prompt_tokens_details is not None
    assert plain.usage.prompt_tokens_details.cached_tokens == 0


@pytest.mark.anyio
async def test_chat_request_reaches_the_policy_in_responses_form() -> None:
    seen: list[dict[str, Any]] = []

    def remember(request: dict[str, Any]) -> str:
        seen.append(request)
        return "ok"

    messages: list[Any] = [
        {"role": "system", "content": "Base instructions."},
        {"role": "developer", "content": "Permissions."},
        {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
        {"role": "system", "content": "Reminder."},
    ]
    async with serve_model_server(remember) as server, client_for(server.base_url) as client:
        with anyio.fail_after(DEADLINE):
            await client.chat.completions.create(
                model="scripted",
                messages=messages,
                tools=[CHAT_WEATHER_TOOL],
                prompt_cache_key="agent-1",
            )
    assert seen == [
        {
            "model": "scripted",
            "instructions": "Base instructions.",
            "tools": [WEATHER_TOOL],
            "tool_choice": "auto",
            "input": [
                {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "Permissions."}],
                },
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "weather?"}],
                },
                {
                    "type": "function_call",
                    "call_id": "call_a",
                    "name": "get_weather",
                    "arguments": '{"city":"Paris"}',
                },
                {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
                {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "Reminder."}],
                },
            ],
            "prompt_cache_key": "agent-1",
            "metadata": {},
        }
    ]
    assert server.requests[0]["normalised"] == seen[0]


@pytest.mark.anyio
async def test_example_policy_calls_the_tool_once_then_answers_with_its_output() -> None:
    async with (
        serve_model_server(tool_then_answer) as server,
        client_for(server.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            first = await client.responses.create(
                model="scripted", input="weather?", tools=[WEATHER_TOOL]
            )
            call = first.output[0]
            assert call.type == "function_call"
            follow_up: list[Any] = [
                {"role": "user", "content": "weather?"},
                {
                    "type": "function_call",
                    "call_id": call.call_id,
                    "name": call.name,
                    "arguments": call.arguments,
                },
                {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"},
            ]
            second = await client.responses.create(
                model="scripted", input=follow_up, tools=[WEATHER_TOOL]
            )
    assert json.loads(call.arguments) == {"city": "example"}
    assert second.output_text == "the tool returned: sunny"


@pytest.mark.anyio
async def test_policy_returning_the_wrong_type_is_answered_500_naming_what_came() -> None:
    async with (
        serve_model_server(lambda request: 42) as server,
        client_for(server.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE), pytest.raises(openai.InternalServerError) as caught:
            await client.responses.create(model="scripted", input="hi")
    assert (
        "the policy returned int; expected a str, a list of output item dicts"
        in caught.value.message
    )


@pytest.mark.anyio
async def test_policy_that_raises_is_answered_500_with_the_exception_text() -> None:
    def broken(request: dict[str, Any]) -> str:
        raise KeyError("no such scenario")

    async with serve_model_server(broken) as server, client_for(server.base_url) as client:
        with anyio.fail_after(DEADLINE), pytest.raises(openai.InternalServerError) as caught:
            await client.chat.completions.create(
                model="scripted", messages=[{"role": "user", "content": "x"}]
            )
    assert caught.value.body == {
        "message": "the policy raised KeyError: 'no such scenario'",
        "type": "server_error",
        "param": None,
        "code": "policy_failed",
    }


@pytest.mark.anyio
async def test_models_endpoint_lists_the_models_asked_for_and_unknown_paths_get_404() -> None:
    async with (
        serve_model_server(lambda request: "ok") as server,
        client_for(server.base_url) as client,
    ):
        with anyio.fail_after(DEADLINE):
            await client.responses.create(model="gpt-test", input="hi")
            models = [model.id async for model in client.models.list()]
            with pytest.raises(openai.NotFoundError) as unknown:
                await client.get("/no/such/path", cast_to=object)
    assert models == ["corral-scripted", "gpt-test"]
    assert unknown.value.message.endswith("GET /v1/no/such/path: Not Found")


@pytest.mark.anyio
async def test_a_request_meant_for_a_proxy_is_not_answered_as_a_model_request() -> None:
    """An absolute-form target (`POST http://host/v1/responses`) is what a client sends to a
    proxy: the server answers 404 naming it, so a test can tell a proxied request arrived."""
    request = (
        b"POST http://model.invalid/v1/responses HTTP/1.1\r\nHost: model.invalid\r\n"
        b"Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
    )
    async with serve_model_server(lambda request: "not for a proxy") as server:
        with anyio.fail_after(DEADLINE):
            host, port = server.host, server.port
            async with await anyio.connect_tcp(host, port) as stream:
                await stream.send(request)
                reply = b""
                with contextlib.suppress(anyio.EndOfStream):
                    while True:
                        reply += await stream.receive()
    assert reply.startswith(b"HTTP/1.1 404")
    assert b"POST /http://model.invalid/v1/responses: Not Found" in reply
    assert server.requests == []
