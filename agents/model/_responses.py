"""The Responses API adapter: sends `ModelRequest.to_responses_body()` and reads its SSE events.

Output items arrive in `response.output_item.done` events and usage in `response.completed`; a
stream that ends without `response.completed` is a failed attempt. In-stream failures
(`response.failed`, `error`) are sorted by `_failures`; `response.incomplete` ends the call.
"""

from __future__ import annotations

from typing import Any

from .._items import FunctionCall, Item, Message, Reasoning, Usage
from ._client import HttpModelClient, StreamReader
from ._errors import ModelResponseIncomplete
from ._failures import failure_from_error_object
from ._retry import TransientFailure
from ._types import EventCallback, ItemDone, ModelRequest, ModelResponse, TextDelta

_ENCRYPTED_REASONING = ["reasoning.encrypted_content"]


class ResponsesModelClient(HttpModelClient):
    """A `ModelClient` for `POST /responses`, streamed or not."""

    path = "/responses"
    events_needed = frozenset(
        {
            "response.output_item.done",
            "response.completed",
            "response.failed",
            "response.incomplete",
            "error",
        }
    )

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        body = request.to_responses_body()
        if request.reasoning_effort is not None:
            # With store=false the reasoning only survives to the next turn encrypted.
            body["include"] = _ENCRYPTED_REASONING
        return body

    def new_reader(self, emit: EventCallback) -> StreamReader:
        return ResponsesStreamReader(emit, self.endpoint)

    def parse_body(self, data: dict[str, Any], emit: EventCallback) -> ModelResponse:
        _raise_for_status(data, self.endpoint)
        items = [item for wire in data.get("output") or () if (item := item_from_output(wire))]
        for item in items:
            emit(ItemDone(item))
        return _response(data, items)


class ResponsesStreamReader:
    """Folds Responses API stream events into a `ModelResponse`."""

    def __init__(self, emit: EventCallback, endpoint: str) -> None:
        self._emit = emit
        self._endpoint = endpoint
        self._items: list[Item] = []
        self._result: ModelResponse | None = None

    @property
    def done(self) -> bool:
        return self._result is not None

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "response.output_text.delta":
            self._emit(TextDelta(str(event.get("delta", ""))))
        elif kind == "response.output_item.done":
            item = item_from_output(event.get("item"))
            if item is not None:
                self._items.append(item)
                self._emit(ItemDone(item))
        elif kind == "response.completed":
            self._complete(event.get("response") or {})
        elif kind == "response.failed":
            raise failure_from_error_object(_error_of(event.get("response")), self._endpoint)
        elif kind == "response.incomplete":
            raise _incomplete(event.get("response") or {}, self._endpoint)
        elif kind == "error":
            raise failure_from_error_object(event.get("error", event), self._endpoint)

    def finish(self) -> ModelResponse:
        if self._result is None:
            raise TransientFailure("the stream ended before response.completed")
        return self._result

    def _complete(self, response: dict[str, Any]) -> None:
        items = self._items
        if not items:
            # Some servers put the output only in the final event.
            items = [
                item for wire in response.get("output") or () if (item := item_from_output(wire))
            ]
            for item in items:
                self._emit(ItemDone(item))
        self._result = _response(response, items)


def item_from_output(wire: object) -> Item | None:
    """A Responses output item as an `Item`; None for kinds corral does not use."""
    if not isinstance(wire, dict):
        return None
    kind = wire.get("type")
    if kind == "message":
        return Message(
            role="assistant", text=_joined(wire.get("content"), "output_text", "refusal")
        )
    if kind == "function_call":
        return FunctionCall(
            call_id=str(wire.get("call_id", "")),
            name=str(wire.get("name", "")),
            arguments=str(wire.get("arguments") or ""),
        )
    if kind == "reasoning":
        # Open-weight servers send raw reasoning as `content` instead of a summary.
        summary = _joined(wire.get("summary"), "summary_text") or _joined(
            wire.get("content"), "reasoning_text"
        )
        encrypted = wire.get("encrypted_content")
        return Reasoning(
            id=str(wire.get("id") or ""),
            summary=summary,
            encrypted_content=encrypted if isinstance(encrypted, str) else None,
        )
    return None


def usage_from_responses(usage: object) -> Usage:
    """Map a Responses `usage` object, tolerating missing detail objects."""
    if not isinstance(usage, dict):
        return Usage()
    inputs = usage.get("input_tokens_details") or {}
    outputs = usage.get("output_tokens_details") or {}
    return Usage(
        input_tokens=usage.get("input_tokens") or 0,
        output_tokens=usage.get("output_tokens") or 0,
        cached_input_tokens=inputs.get("cached_tokens") or 0,
        reasoning_tokens=outputs.get("reasoning_tokens") or 0,
    )


def _response(data: dict[str, Any], items: list[Item]) -> ModelResponse:
    return ModelResponse(
        items=items,
        usage=usage_from_responses(data.get("usage")),
        model=str(data.get("model") or ""),
        response_id=str(data.get("id") or ""),
    )


def _raise_for_status(response: dict[str, Any], endpoint: str) -> None:
    status = response.get("status")
    if status == "failed":
        raise failure_from_error_object(_error_of(response), endpoint)
    if status == "incomplete":
        raise _incomplete(response, endpoint)


def _error_of(response: object) -> object:
    return response.get("error") if isinstance(response, dict) else None


def _incomplete(response: dict[str, Any], endpoint: str) -> ModelResponseIncomplete:
    details = response.get("incomplete_details") or {}
    reason = str(details.get("reason") or "unknown")
    return ModelResponseIncomplete(
        f"the model at {endpoint} stopped before finishing its response ({reason})", reason=reason
    )


def _joined(parts: object, *kinds: str) -> str:
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    texts = []
    for part in parts:
        if isinstance(part, dict) and part.get("type") in kinds:
            texts.append(str(part.get("text") or part.get("refusal") or ""))
    return "".join(texts)
