"""The Chat Completions adapter: a translated request out, normalised items back.

A streamed answer is assembled from deltas: text, reasoning (`reasoning_content` or `reasoning`,
as vLLM, DeepSeek and OpenRouter send it) and tool-call fragments keyed by index. A stream that
ends before a `finish_reason` is a failed attempt; `length` and `content_filter` end the call.
"""

from __future__ import annotations

from typing import Any

from .._items import FunctionCall, Item, Message, Reasoning, Usage
from ._chat_request import chat_body
from ._client import HttpModelClient, StreamReader
from ._errors import ModelResponseIncomplete
from ._failures import failure_from_error_object
from ._retry import TransientFailure
from ._types import EventCallback, ItemDone, ModelRequest, ModelResponse, TextDelta

_INCOMPLETE_REASONS = {"length": "max_output_tokens", "content_filter": "content_filter"}


class ChatCompletionsModelClient(HttpModelClient):
    """A `ModelClient` for `POST /chat/completions`, streamed or not."""

    path = "/chat/completions"

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        return chat_body(request)

    def new_reader(self, emit: EventCallback) -> StreamReader:
        return ChatStreamReader(emit, self.endpoint)

    def parse_body(self, data: dict[str, Any], emit: EventCallback) -> ModelResponse:
        if data.get("error"):
            raise failure_from_error_object(data["error"], self.endpoint)
        choices = data.get("choices") or [{}]
        message = choices[0].get("message") or {}
        _check_finish(choices[0].get("finish_reason"), self.endpoint)
        calls = [_function_call(call) for call in message.get("tool_calls") or ()]
        items = _items(_reasoning_text(message), message.get("content") or "", calls)
        for item in items:
            emit(ItemDone(item))
        return _response(data, items, usage_from_chat(data.get("usage")))


class ChatStreamReader:
    """Folds Chat Completions chunks into a `ModelResponse`."""

    def __init__(self, emit: EventCallback, endpoint: str) -> None:
        self._emit = emit
        self._endpoint = endpoint
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._usage = Usage()
        self._head: dict[str, Any] = {}

    @property
    def done(self) -> bool:
        return self._finish is not None

    def feed(self, event: dict[str, Any]) -> None:
        if not self._head:
            self._head = event
        if event.get("usage"):
            self._usage = usage_from_chat(event["usage"])
        for choice in event.get("choices") or ():
            self._feed_delta(choice.get("delta") or {})
            if choice.get("finish_reason"):
                self._finish = str(choice["finish_reason"])

    def finish(self) -> ModelResponse:
        if self._finish is None:
            raise TransientFailure("the stream ended before a finish_reason")
        _check_finish(self._finish, self._endpoint)
        calls = [_function_call(self._calls[index]) for index in sorted(self._calls)]
        items = _items("".join(self._reasoning), "".join(self._text), calls)
        for item in items:
            self._emit(ItemDone(item))
        return _response(self._head, items, self._usage)

    def _feed_delta(self, delta: dict[str, Any]) -> None:
        text = delta.get("content")
        if text:
            self._text.append(text)
            self._emit(TextDelta(text))
        reasoning = _reasoning_text(delta)
        if reasoning:
            self._reasoning.append(reasoning)
        for fragment in delta.get("tool_calls") or ():
            self._merge_call(fragment)

    def _merge_call(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index")
        if not isinstance(index, int):
            index = len(self._calls)
        call = self._calls.setdefault(index, {"id": "", "function": {"name": "", "arguments": ""}})
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function") or {}
        if function.get("name"):
            call["function"]["name"] = function["name"]
        call["function"]["arguments"] += function.get("arguments") or ""


def usage_from_chat(usage: object) -> Usage:
    """Map a Chat Completions `usage` object, tolerating missing detail objects."""
    if not isinstance(usage, dict):
        return Usage()
    prompt = usage.get("prompt_tokens_details") or {}
    completion = usage.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=usage.get("prompt_tokens") or 0,
        output_tokens=usage.get("completion_tokens") or 0,
        cached_input_tokens=prompt.get("cached_tokens") or 0,
        reasoning_tokens=completion.get("reasoning_tokens") or 0,
    )


def _items(reasoning: str, text: str, calls: list[FunctionCall]) -> list[Item]:
    items: list[Item] = []
    if reasoning:
        items.append(Reasoning(summary=reasoning))
    if text:
        items.append(Message(role="assistant", text=text))
    items.extend(calls)
    return items


def _function_call(call: dict[str, Any]) -> FunctionCall:
    function = call.get("function") or {}
    # Some local servers omit tool-call ids: the agent core gives such a call one, the same on
    # every replay (see `CallIds`).
    return FunctionCall(
        call_id=str(call.get("id") or ""),
        name=str(function.get("name") or ""),
        arguments=str(function.get("arguments") or ""),
    )


def _reasoning_text(fields: dict[str, Any]) -> str:
    value = fields.get("reasoning_content") or fields.get("reasoning")
    return value if isinstance(value, str) else ""


def _check_finish(reason: object, endpoint: str) -> None:
    incomplete = _INCOMPLETE_REASONS.get(str(reason))
    if incomplete is not None:
        raise ModelResponseIncomplete(
            f"the model at {endpoint} stopped before finishing its response ({incomplete})",
            reason=incomplete,
        )


def _response(head: dict[str, Any], items: list[Item], usage: Usage) -> ModelResponse:
    return ModelResponse(
        items=items,
        usage=usage,
        model=str(head.get("model") or ""),
        response_id=str(head.get("id") or ""),
    )
