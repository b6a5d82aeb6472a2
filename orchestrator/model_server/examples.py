"""Example policies for `corral model-server --policy`, and the policy contract in small.

A policy takes the request as a Responses-API dict (`model`, `instructions`, `tools`, `input`,
`prompt_cache_key`, `metadata`) and returns a str, a list of output items, or
`{"output": [...], "usage": {...}}`. Run one with
`corral model-server --policy corral.orchestrator.model_server.examples:echo`.
"""

from __future__ import annotations

import json
from typing import Any

_PLACEHOLDERS: dict[str, Any] = {
    "string": "example",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "object": {},
}


def echo(request: dict[str, Any]) -> str:
    """Answers with the text of the last user message."""
    for item in reversed(request["input"]):
        if item.get("type") == "message" and item.get("role") == "user":
            return _text_of(item)
    return ""


def tool_then_answer(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls the request's first function tool once, then answers with what it returned."""
    outputs = [item for item in request["input"] if item.get("type") == "function_call_output"]
    tools = [tool for tool in request["tools"] if tool.get("type") == "function"]
    if outputs or not tools:
        said = f"the tool returned: {outputs[-1]['output']}" if outputs else echo(request)
        return [{"type": "message", "role": "assistant", "content": [_text(said)]}]
    tool = tools[0]
    arguments = _placeholder_arguments(tool.get("parameters") or {})
    return [{"type": "function_call", "name": tool["name"], "arguments": json.dumps(arguments)}]


def _text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text}


def _text_of(message: dict[str, Any]) -> str:
    parts = message.get("content") or []
    return "".join(part.get("text", "") for part in parts if isinstance(part, dict))


def _placeholder_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties") or {}
    required = schema.get("required") or []
    arguments: dict[str, Any] = {}
    for name in required:
        kind = (properties.get(name) or {}).get("type")
        arguments[name] = _PLACEHOLDERS.get(kind) if isinstance(kind, str) else None
    return arguments
