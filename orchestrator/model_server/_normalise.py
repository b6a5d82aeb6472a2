"""Turns a request to either endpoint into one shape: a Responses-API request dict.

Responses requests keep their items as sent (only the easy forms are spelled out: a string input
becomes a user message, string content becomes a text part), so prefix accounting sees the
client's real bytes. Chat Completions requests are translated item by item.
"""

from __future__ import annotations

from typing import Any

RESPONSES = "/v1/responses"
CHAT_COMPLETIONS = "/v1/chat/completions"


def normalise_request(endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request in Responses-API form, whichever endpoint it came to."""
    if endpoint == CHAT_COMPLETIONS:
        instructions, items = _chat_messages(_as_list(body.get("messages")))
        tools = [_chat_tool(tool) for tool in _as_list(body.get("tools"))]
    else:
        instructions = body.get("instructions") or ""
        items = [_responses_item(item) for item in _responses_input(body.get("input"))]
        tools = list(_as_list(body.get("tools")))
    return {
        "model": body.get("model", ""),
        "instructions": instructions,
        "tools": tools,
        # "none" marks a request that must not call tools (a compaction summary sends the
        # agent's tools with it, to keep the cached prefix): policies read it here.
        "tool_choice": body.get("tool_choice", "auto"),
        "input": items,
        "prompt_cache_key": body.get("prompt_cache_key"),
        "metadata": body.get("metadata") or {},
    }


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _responses_input(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return _as_list(value)


def _responses_item(item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    if "type" not in item and "role" in item:
        item = {"type": "message", **item}
    if item.get("type") == "message" and not isinstance(item.get("content"), list):
        item = {**item, "content": _text_parts(item.get("content"), item.get("role"))}
    return item


def _text_parts(content: Any, role: Any) -> list[dict[str, Any]]:
    part_type = "output_text" if role == "assistant" else "input_text"
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": part_type, "text": content}]
    parts: list[dict[str, Any]] = []
    for part in _as_list(content):
        if isinstance(part, dict) and part.get("type") == "text":
            parts.append({"type": part_type, "text": part.get("text", "")})
        elif isinstance(part, dict) and part.get("type") == "image_url":
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            parts.append({"type": "input_image", "image_url": url})
        else:
            parts.append(part)
    return parts


def _plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = [part.get("text", "") for part in _as_list(content) if isinstance(part, dict)]
    return "".join(text for text in texts if isinstance(text, str))


def _chat_messages(messages: list[Any]) -> tuple[str, list[Any]]:
    instructions: str | None = None
    items: list[Any] = []
    for message in messages:
        if not isinstance(message, dict):
            items.append(message)
        elif message.get("role") == "system" and instructions is None:
            instructions = _plain_text(message.get("content"))
        elif message.get("role") == "system":
            # Responses has one instructions slot; later system text is what developer items carry.
            items.extend(_chat_message_items({**message, "role": "developer"}))
        else:
            items.extend(_chat_message_items(message))
    return instructions or "", items


def _chat_message_items(message: dict[str, Any]) -> list[dict[str, Any]]:
    role = message.get("role")
    if role in ("tool", "function"):
        call_id = message.get("tool_call_id", message.get("name", ""))
        output = _plain_text(message.get("content"))
        return [{"type": "function_call_output", "call_id": call_id, "output": output}]
    calls = _as_list(message.get("tool_calls"))
    content = message.get("content")
    if calls and not content:
        content = None  # SDKs send "" beside tool calls to mean "no text", not a message
    parts = _text_parts(content, role)
    items: list[dict[str, Any]] = []
    if parts or not calls:
        items.append({"type": "message", "role": role, "content": parts})
    items.extend(_chat_tool_call(call) for call in calls if isinstance(call, dict))
    return items


def _chat_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    return {
        "type": "function_call",
        "call_id": call.get("id", ""),
        "name": function.get("name", ""),
        "arguments": function.get("arguments", ""),
    }


def _chat_tool(tool: Any) -> Any:
    if not isinstance(tool, dict) or tool.get("type") != "function":
        return tool
    function = tool.get("function") or {}
    return {
        "type": "function",
        "name": function.get("name", ""),
        "description": function.get("description"),
        "parameters": function.get("parameters"),
        "strict": function.get("strict"),
    }
