"""Chat Completions on the wire: the completion object and its `chat.completion.chunk` stream.

Text becomes `content`, function calls become `tool_calls` (streamed as deltas carrying their
`index`), reasoning items are dropped since the format has no place for them.
"""

from __future__ import annotations

from typing import Any

from ._answer import Answer
from ._json import dumps
from ._responses_wire import split_pieces

DONE_FRAME = b"data: [DONE]\n\n"


def chat_completion(body: dict[str, Any], answer: Answer) -> dict[str, Any]:
    """The non-streaming `chat.completion` object."""
    text, calls = _text_and_calls(answer)
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if calls:
        message["tool_calls"] = [_tool_call(call) for call in calls]
    choice = {"index": 0, "message": message, "finish_reason": _finish(calls), "logprobs": None}
    return {
        **_header(body, answer, "chat.completion"),
        "choices": [choice],
        "usage": answer.usage.chat_form(),
    }


def chat_chunks(body: dict[str, Any], answer: Answer) -> list[dict[str, Any]]:
    """Every chunk of a streamed completion, ending with the usage chunk when it was asked for."""
    text, calls = _text_and_calls(answer)
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "" if text else None}]
    deltas.extend({"content": piece} for piece in split_pieces(text or ""))
    for index, call in enumerate(calls):
        deltas.extend(_tool_call_deltas(index, call))
    with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    header = _header(body, answer, "chat.completion.chunk")
    if with_usage:
        header["usage"] = None
    chunks = [{**header, "choices": [_choice(delta, None)]} for delta in deltas]
    chunks.append({**header, "choices": [_choice({}, _finish(calls))]})
    if with_usage:
        chunks.append({**header, "choices": [], "usage": answer.usage.chat_form()})
    return chunks


def encode_chunk(chunk: dict[str, Any], *, plain: bool = False) -> bytes:
    """One chunk as an SSE frame (`plain` as for `_json.dumps`)."""
    return b"data: " + dumps(chunk, plain=plain) + b"\n\n"


def _header(body: dict[str, Any], answer: Answer, kind: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{answer.id_stem}",
        "object": kind,
        "created": answer.created_at,
        "model": body.get("model", ""),
        "system_fingerprint": None,
    }


def _text_and_calls(answer: Answer) -> tuple[str | None, list[dict[str, Any]]]:
    texts = [
        part.get("text", "")
        for item in answer.output
        if item["type"] == "message"
        for part in item["content"]
        if part.get("type") == "output_text"
    ]
    calls = [item for item in answer.output if item["type"] == "function_call"]
    return ("".join(texts) if texts else None), calls


def _tool_call(call: dict[str, Any]) -> dict[str, Any]:
    function = {"name": call["name"], "arguments": call["arguments"]}
    return {"id": call["call_id"], "type": "function", "function": function}


def _tool_call_deltas(index: int, call: dict[str, Any]) -> list[dict[str, Any]]:
    opened = {**_tool_call(call), "index": index}
    opened["function"] = {"name": call["name"], "arguments": ""}
    deltas = [{"tool_calls": [opened]}]
    deltas.extend(
        {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
        for piece in split_pieces(call["arguments"])
    )
    return deltas


def _choice(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}


def _finish(calls: list[dict[str, Any]]) -> str:
    return "tool_calls" if calls else "stop"
