"""The in-memory model twin: answers from a function and records what it was asked."""

from __future__ import annotations

import anyio
import pytest

from corral.agents._items import FunctionCall, Item, Message, Usage
from corral.agents.model import (
    ItemDone,
    ModelRequest,
    ModelResponse,
    ModelUnavailable,
    ScriptedModelClient,
    StreamEvent,
    TextDelta,
)


def ask(text: str) -> ModelRequest:
    return ModelRequest(model="m", instructions="", input=[Message(role="user", text=text)])


@pytest.mark.anyio
async def test_string_reply_is_one_streamed_assistant_message() -> None:
    client = ScriptedModelClient(lambda request: "hello")
    events: list[StreamEvent] = []
    response = await client.complete(ask("hi"), on_event=events.append)
    assert response.items == [Message(role="assistant", text="hello")]
    assert events == [TextDelta("hello"), ItemDone(Message(role="assistant", text="hello"))]
    assert client.requests == [ask("hi")]


@pytest.mark.anyio
async def test_items_and_full_responses_pass_through_in_order() -> None:
    call = FunctionCall(call_id="c1", name="f", arguments="{}")
    usage = Usage(input_tokens=5, output_tokens=2)
    scripted: list[list[Item] | ModelResponse] = [
        [call],
        ModelResponse(items=[call], usage=usage, response_id="r9"),
    ]
    replies = iter(scripted)
    client = ScriptedModelClient(lambda request: next(replies))
    first = await client.complete(ask("one"))
    second = await client.complete(ask("two"))
    assert first.items == [call] and second.usage == usage and second.response_id == "r9"
    assert [r.input[0] for r in client.requests] == [
        Message(role="user", text="one"),
        Message(role="user", text="two"),
    ]


@pytest.mark.anyio
async def test_async_reply_can_hold_the_call_until_released() -> None:
    release = anyio.Event()

    async def respond(request: ModelRequest) -> str:
        await release.wait()
        return "released"

    client = ScriptedModelClient(respond)
    results: list[ModelResponse] = []

    async def call() -> None:
        results.append(await client.complete(ask("wait")))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await anyio.wait_all_tasks_blocked()
            assert results == [] and len(client.requests) == 1
            release.set()
    assert results[0].items == [Message(role="assistant", text="released")]


@pytest.mark.anyio
async def test_reply_function_can_stand_in_for_an_unavailable_endpoint() -> None:
    def respond(request: ModelRequest) -> str:
        raise ModelUnavailable("model down", attempts=5, last_status=503, cause="HTTP 503")

    with pytest.raises(ModelUnavailable, match="model down"):
        await ScriptedModelClient(respond).complete(ask("hi"))
