"""The scripted model server under what real clients send: the `openai` SDK on both APIs,
streamed and not, with the options LangChain- and Agents-SDK-style clients add, and raw httpx.
Every request gets an answer or an OpenAI-shaped 4xx the SDK raises as such, never a 500."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import openai
import pytest

from corral.orchestrator.model_server import serve_model_server

pytestmark = pytest.mark.anyio

DEADLINE = 10.0
USER: Any = [{"role": "user", "content": "hi"}]
CHAT_TOOL: Any = {
    "type": "function",
    "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
}
TOOL: Any = {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}


@asynccontextmanager
async def sdk_client() -> AsyncIterator[openai.AsyncOpenAI]:
    async with serve_model_server(lambda request: "hello") as model:
        client = openai.AsyncOpenAI(base_url=model.base_url, api_key="unused", max_retries=0)
        async with client:
            yield client


CHAT_OPTIONS: list[dict[str, Any]] = [
    {"tools": [CHAT_TOOL], "tool_choice": "auto", "parallel_tool_calls": False},
    {"tools": [CHAT_TOOL], "tool_choice": "required"},
    {"tools": [CHAT_TOOL], "tool_choice": "none"},
    {"tools": [CHAT_TOOL], "tool_choice": {"type": "function", "function": {"name": "f"}}},
    {"n": 1, "temperature": 0.2, "top_p": 1, "seed": 7, "stop": ["x"], "user": "u"},
    {"max_tokens": 10, "max_completion_tokens": 10, "logprobs": True, "top_logprobs": 2},
    {"response_format": {"type": "json_object"}, "metadata": {"a": "b"}, "store": False},
    {"extra_body": {"an_unknown_field": 1}},
]


@pytest.mark.parametrize("options", CHAT_OPTIONS)
@pytest.mark.parametrize("stream", [False, True])
async def test_chat_completions_answer_what_framework_clients_add(
    options: dict[str, Any], stream: bool
) -> None:
    extra: dict[str, Any] = {"stream_options": {"include_usage": True}} if stream else {}
    async with sdk_client() as client:
        with anyio.fail_after(DEADLINE):
            answer = await client.chat.completions.create(
                model="m", messages=USER, stream=stream, **extra, **options
            )
            if isinstance(answer, openai.AsyncStream):
                chunks = [chunk async for chunk in answer]
                text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                usage = chunks[-1].usage
            else:
                text, usage = answer.choices[0].message.content or "", answer.usage
    assert text == "hello" and usage is not None and usage.completion_tokens > 0


RESPONSE_OPTIONS: list[dict[str, Any]] = [
    {"tools": [TOOL], "tool_choice": "auto", "parallel_tool_calls": True},
    {"tools": [TOOL], "tool_choice": "required"},
    {"tools": [TOOL], "tool_choice": {"type": "function", "name": "f"}},
    {"instructions": "be brief", "store": False, "include": ["reasoning.encrypted_content"]},
    {"reasoning": {"effort": "low", "summary": "auto"}, "text": {"format": {"type": "text"}}},
    {"max_output_tokens": 50, "truncation": "auto", "metadata": {"a": "b"}, "temperature": 0},
    {"extra_body": {"an_unknown_field": 1}},
]


@pytest.mark.parametrize("options", RESPONSE_OPTIONS)
@pytest.mark.parametrize("stream", [False, True])
async def test_responses_answer_what_framework_clients_add(
    options: dict[str, Any], stream: bool
) -> None:
    async with sdk_client() as client:
        with anyio.fail_after(DEADLINE):
            answer = await client.responses.create(model="m", input="hi", stream=stream, **options)
            if isinstance(answer, openai.AsyncStream):
                events = [event async for event in answer]
                assert events[-1].type == "response.completed"
                answer = events[-1].response
    assert answer.output_text == "hello" and answer.status == "completed"


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"n": 2}, "n=2"),
        ({"n": 0}, "n=0"),
        ({"stream": True, "stream_options": "usage"}, "stream_options must be an object"),
        ({"stream_options": ["include_usage"]}, "stream_options must be an object"),
    ],
)
async def test_chat_options_the_server_cannot_honour_get_an_openai_400_not_a_500(
    options: dict[str, Any], words: str
) -> None:
    async with sdk_client() as client:
        with anyio.fail_after(DEADLINE), pytest.raises(openai.BadRequestError) as refused:
            answer = await client.chat.completions.create(model="m", messages=USER, **options)
            if isinstance(answer, openai.AsyncStream):
                [chunk async for chunk in answer]
    assert words in refused.value.message
    assert isinstance(refused.value.body, dict) and refused.value.body["type"]


@pytest.mark.parametrize(
    ("method", "path", "content", "status"),
    [
        ("POST", "/chat/completions", b"{not json", 400),
        ("POST", "/responses", b"[1, 2]", 400),
        ("POST", "/chat/completions", b'{"messages": [], "n": "two"}', 400),
        ("GET", "/embeddings", b"", 404),
        ("GET", "/responses", b"", 405),
    ],
)
async def test_raw_httpx_gets_an_openai_shaped_error_body(
    method: str, path: str, content: bytes, status: int
) -> None:
    async with (
        serve_model_server(lambda request: "hello") as model,
        httpx.AsyncClient(base_url=model.base_url, timeout=DEADLINE) as http,
    ):
        answer = await http.request(method, path.lstrip("/"), content=content)
    error = json.loads(answer.content)["error"]
    assert answer.status_code == status
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
