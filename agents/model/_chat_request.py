"""Translate a Responses-shaped `ModelRequest` into a Chat Completions request body.

`instructions` become the first `system` message; developer messages stay `developer` messages;
function calls join the assistant message they follow (as `tool_calls`); their outputs become
`tool` messages. Reasoning items have no Chat Completions form and are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._items import FunctionCall, FunctionCallOutput, Item, Message
from ._errors import ModelConfigError
from ._types import ModelRequest

_TOOL_FUNCTION_KEYS = ("description", "parameters", "strict")


def chat_body(request: ModelRequest) -> dict[str, Any]:
    """The `POST /chat/completions` body for `request`."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": chat_messages(request.instructions, request.input),
    }
    if request.tools:
        body["tools"] = [chat_tool(tool) for tool in request.tools]
        body["tool_choice"] = request.tool_choice
        body["parallel_tool_calls"] = request.parallel_tool_calls
    body["stream"] = request.stream
    if request.stream:
        body["stream_options"] = {"include_usage": True}
    if request.prompt_cache_key is not None:
        body["prompt_cache_key"] = request.prompt_cache_key
    if request.metadata:
        body["metadata"] = dict(request.metadata)
    if request.reasoning_effort is not None:
        body["reasoning_effort"] = request.reasoning_effort
    return body


def chat_messages(instructions: str, items: Sequence[Item]) -> list[dict[str, Any]]:
    """The conversation as Chat Completions messages, in order."""
    messages: list[dict[str, Any]] = []
    if instructions:
        messages.append({"role": "system", "content": instructions})
    # The assistant message that function calls right after it belong to.
    open_turn: dict[str, Any] | None = None
    for item in items:
        if isinstance(item, Message):
            message = {"role": item.role, "content": _chat_content(item)}
            messages.append(message)
            open_turn = message if item.role == "assistant" else None
        elif isinstance(item, FunctionCall):
            if open_turn is None:
                open_turn = {"role": "assistant", "content": None}
                messages.append(open_turn)
            open_turn.setdefault("tool_calls", []).append(_tool_call(item))
        elif isinstance(item, FunctionCallOutput):
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
            open_turn = None
    return messages


def _chat_content(message: Message) -> str | list[dict[str, Any]]:
    """A message's text, or its text and images as Chat Completions content parts."""
    if not message.images:
        return message.text
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in message.images]
    return parts


def chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A Responses function tool in Chat Completions form."""
    if tool.get("type") != "function":
        raise ModelConfigError(
            f"the Chat Completions API takes only function tools, not {tool.get('type')!r} "
            f"(tool {tool.get('name', '?')!r}); use api='responses' for it"
        )
    function = {"name": tool["name"]}
    function.update({key: tool[key] for key in _TOOL_FUNCTION_KEYS if key in tool})
    return {"type": "function", "function": function}


def _tool_call(call: FunctionCall) -> dict[str, Any]:
    return {
        "id": call.call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }
