"""The Responses API on the wire: the response object and its full stream of SSE events.

Events follow what the `openai` SDK's stream accumulator checks: `response.created` first, each
output item opened with `output_item.added` and closed with `output_item.done`, content parts and
argument deltas in between, and `response.completed` carrying the whole response with usage.
"""

from __future__ import annotations

from typing import Any

from ._answer import Answer
from ._json import dumps

DELTA_CHARS = 24
"""Text and arguments are streamed in pieces of this many characters, so clients accumulate."""


def response_object(body: dict[str, Any], answer: Answer, *, done: bool) -> dict[str, Any]:
    """The `response` object: in progress (no output yet) or completed with output and usage."""
    return {
        "id": f"resp_{answer.id_stem}",
        "object": "response",
        "created_at": answer.created_at,
        "status": "completed" if done else "in_progress",
        "completed_at": answer.created_at if done else None,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "metadata": body.get("metadata") or {},
        "model": body.get("model", ""),
        "output": answer.output if done else [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "prompt_cache_key": body.get("prompt_cache_key"),
        "reasoning": body.get("reasoning"),
        "max_output_tokens": body.get("max_output_tokens"),
        "previous_response_id": body.get("previous_response_id"),
        "text": body.get("text") or {"format": {"type": "text"}},
        "truncation": body.get("truncation", "disabled"),
        "usage": answer.usage.responses_form() if done else None,
    }


def response_events(body: dict[str, Any], answer: Answer) -> list[dict[str, Any]]:
    """Every event of a streamed response, numbered by `sequence_number` from 0."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response_object(body, answer, done=False)},
        {"type": "response.in_progress", "response": response_object(body, answer, done=False)},
    ]
    for index, item in enumerate(answer.output):
        events.extend(_item_events(item, index))
    events.append(
        {"type": "response.completed", "response": response_object(body, answer, done=True)}
    )
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def encode_event(event: dict[str, Any], *, plain: bool = False) -> bytes:
    """One event as an SSE frame with its `event:` name (`plain` as for `_json.dumps`)."""
    name = str(event["type"]).encode()
    return b"event: " + name + b"\ndata: " + dumps(event, plain=plain) + b"\n\n"


def _item_events(item: dict[str, Any], index: int) -> list[dict[str, Any]]:
    if item["type"] == "message":
        opened = {**item, "status": "in_progress", "content": []}
        inner = _message_part_events(item, index)
    elif item["type"] == "function_call":
        opened = {**item, "status": "in_progress", "arguments": ""}
        inner = _arguments_events(item, index)
    else:
        opened, inner = item, []
    return [
        {"type": "response.output_item.added", "output_index": index, "item": opened},
        *inner,
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def _message_part_events(item: dict[str, Any], index: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    where = {"item_id": item["id"], "output_index": index}
    for part_index, part in enumerate(item["content"]):
        at = {**where, "content_index": part_index}
        if part.get("type") != "output_text":
            events.append({"type": "response.content_part.added", **at, "part": part})
            events.append({"type": "response.content_part.done", **at, "part": part})
            continue
        text = part.get("text", "")
        events.append({"type": "response.content_part.added", **at, "part": {**part, "text": ""}})
        events.extend(
            {"type": "response.output_text.delta", **at, "delta": piece, "logprobs": []}
            for piece in split_pieces(text)
        )
        events.append({"type": "response.output_text.done", **at, "text": text, "logprobs": []})
        events.append({"type": "response.content_part.done", **at, "part": part})
    return events


def _arguments_events(item: dict[str, Any], index: int) -> list[dict[str, Any]]:
    where = {"item_id": item["id"], "output_index": index}
    events: list[dict[str, Any]] = [
        {"type": "response.function_call_arguments.delta", **where, "delta": piece}
        for piece in split_pieces(item["arguments"])
    ]
    events.append(
        {"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]}
    )
    return events


def split_pieces(text: str) -> list[str]:
    """`text` cut into consecutive pieces of at most `DELTA_CHARS` characters."""
    return [text[start : start + DELTA_CHARS] for start in range(0, len(text), DELTA_CHARS)]
