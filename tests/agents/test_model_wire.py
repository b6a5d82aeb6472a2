"""What the adapters make of wire shapes the scripted server does not send.

Chat reasoning deltas (vLLM, DeepSeek, OpenRouter), streams that end early, in-stream failures,
and `Retry-After` in its date form are fed to the readers directly as the dicts the SDK decodes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import pytest

from corral.agents._items import FunctionCall, Message, Reasoning
from corral.agents.model import (
    ModelConfigError,
    ModelContextWindowExceeded,
    ModelRequest,
    ModelResponseIncomplete,
    StreamEvent,
)
from corral.agents.model._chat import ChatStreamReader
from corral.agents.model._chat_request import chat_body
from corral.agents.model._responses import ResponsesStreamReader
from corral.agents.model._retry import TransientFailure, retry_after_seconds

ENDPOINT = "http://127.0.0.1:9/v1"


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_chat_reasoning_deltas_become_a_reasoning_item_before_the_answer(field: str) -> None:
    events: list[StreamEvent] = []
    reader = ChatStreamReader(events.append, ENDPOINT)
    for delta in ({field: "Think "}, {field: "twice."}, {"content": "Yes."}):
        reader.feed(chunk(delta))
    reader.feed(chunk({}, finish="stop"))
    reader.feed(
        {
            "id": "chatcmpl-1",
            "choices": [],
            "usage": {
                "prompt_tokens": 9,
                "completion_tokens": 4,
                "completion_tokens_details": {"reasoning_tokens": 3},
            },
        }
    )
    response = reader.finish()
    assert response.items == [
        Reasoning(summary="Think twice."),
        Message(role="assistant", text="Yes."),
    ]
    assert (response.usage.input_tokens, response.usage.reasoning_tokens) == (9, 3)


def test_chat_tool_call_fragments_join_by_index() -> None:
    reader = ChatStreamReader(lambda event: None, ENDPOINT)
    reader.feed(
        chunk(
            {"tool_calls": [{"index": 1, "id": "c2", "function": {"name": "g", "arguments": ""}}]}
        )
    )
    reader.feed(
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"a"'}}
                ]
            }
        )
    )
    reader.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}))
    reader.feed(chunk({}, finish="tool_calls"))
    assert reader.finish().items == [
        FunctionCall(call_id="c1", name="f", arguments='{"a": 1}'),
        FunctionCall(call_id="c2", name="g", arguments=""),
    ]


def test_chat_stream_cut_off_by_the_length_limit_is_incomplete() -> None:
    reader = ChatStreamReader(lambda event: None, ENDPOINT)
    reader.feed(chunk({"content": "Half an ans"}, finish="length"))
    with pytest.raises(ModelResponseIncomplete, match="max_output_tokens"):
        reader.finish()


def test_stream_that_ends_without_completion_is_a_transient_failure() -> None:
    responses = ResponsesStreamReader(lambda event: None, ENDPOINT)
    responses.feed({"type": "response.output_text.delta", "delta": "Hel"})
    chat = ChatStreamReader(lambda event: None, ENDPOINT)
    chat.feed(chunk({"content": "Hel"}))
    with pytest.raises(TransientFailure, match=r"before response\.completed"):
        responses.finish()
    with pytest.raises(TransientFailure, match="before a finish_reason"):
        chat.finish()


def test_failed_response_with_a_rate_limit_hint_waits_as_told() -> None:
    reader = ResponsesStreamReader(lambda event: None, ENDPOINT)
    error = {
        "code": "rate_limit_exceeded",
        "message": "Rate limit reached. Please try again in 1.5s.",
    }
    with pytest.raises(TransientFailure) as caught:
        reader.feed({"type": "response.failed", "response": {"status": "failed", "error": error}})
    assert caught.value.retry_after == 1.5


def test_failed_response_for_an_oversized_input_asks_for_compaction() -> None:
    reader = ResponsesStreamReader(lambda event: None, ENDPOINT)
    error = {"code": "context_length_exceeded", "message": "Your input exceeds the context window."}
    with pytest.raises(ModelContextWindowExceeded, match="compact the history"):
        reader.feed({"type": "response.failed", "response": {"status": "failed", "error": error}})


def test_retry_after_is_read_in_milliseconds_then_seconds_then_as_a_date() -> None:
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "7"}) == 0.25
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    now = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2030, 1, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert retry_after_seconds({"retry-after": later}, now=now.timestamp()) == 30.0
    assert retry_after_seconds({"retry-after": "soon"}) is None


def test_chat_translation_refuses_tools_it_cannot_express() -> None:
    request = ModelRequest(model="m", instructions="", input=[], tools=[{"type": "web_search"}])
    with pytest.raises(ModelConfigError, match="only function tools"):
        chat_body(request)
