"""What a policy's result means: complete output items with ids, and token usage.

A policy may return a string, a list of output items, or `{"output": [...], "usage": {...}}`;
this module checks that shape, fills the ids and fields the wire formats need, and estimates the
usage it was not given (4 bytes of canonical serialisation per token). It knows no wire format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._errors import PolicyFailed

BYTES_PER_TOKEN = 4
_EXPECTED = "a str, a list of output item dicts, or a dict with an 'output' list"
_USAGE_KEYS = ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens")


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    reasoning_tokens: int

    def responses_form(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_tokens, "cache_write_tokens": 0},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }

    def chat_form(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.input_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }


@dataclass(frozen=True)
class Answer:
    """One request's answer, independent of the endpoint that will carry it."""

    id_stem: str
    created_at: int
    output: list[dict[str, Any]]
    usage: Usage


def build_answer(
    result: Any, *, id_stem: str, created_at: int, input_bytes: int, prefix_bytes: int
) -> Answer:
    """Check the policy's result and complete it; raises `PolicyFailed` for a wrong shape."""
    raw_items, usage_override = _split_result(result)
    output = [_complete_item(item, index, id_stem) for index, item in enumerate(raw_items)]
    estimate = _estimate_usage(output, input_bytes, prefix_bytes)
    usage = Usage(**{**vars(estimate), **usage_override})
    return Answer(id_stem=id_stem, created_at=created_at, output=output, usage=usage)


def _split_result(result: Any) -> tuple[list[Any], dict[str, int]]:
    if isinstance(result, str):
        return [{"type": "message", "content": result}], {}
    if isinstance(result, list):
        return result, {}
    if isinstance(result, dict) and isinstance(result.get("output"), list):
        return result["output"], _usage_override(result.get("usage"))
    if isinstance(result, dict):
        raise PolicyFailed(
            f"the policy returned a dict without an 'output' list; expected {_EXPECTED}"
        )
    raise PolicyFailed(f"the policy returned {type(result).__name__}; expected {_EXPECTED}")


def _usage_override(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    if not isinstance(usage, dict):
        raise PolicyFailed(f"the policy's 'usage' is a {type(usage).__name__}; expected a dict")
    unknown = sorted(set(usage) - set(_USAGE_KEYS))
    if unknown:
        raise PolicyFailed(
            f"the policy's 'usage' has unknown keys {unknown}; use {list(_USAGE_KEYS)}"
        )
    for key, value in usage.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise PolicyFailed(f"the policy's usage {key!r} is {value!r}; expected an int >= 0")
    return dict(usage)


def _complete_item(item: Any, index: int, stem: str) -> dict[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        got = type(item).__name__ if not isinstance(item, dict) else "dict without a 'type'"
        raise PolicyFailed(f"output item {index} is a {got}; expected a dict with a 'type'")
    if item["type"] == "message":
        return _complete_message(item, index, stem)
    if item["type"] == "function_call":
        return _complete_function_call(item, index, stem)
    if item["type"] == "reasoning":
        return {"id": f"rs_{stem}_{index}", "summary": [], **item}
    return {"id": f"item_{stem}_{index}", **item}


def _complete_message(item: dict[str, Any], index: int, stem: str) -> dict[str, Any]:
    content = item.get("content", [])
    if isinstance(content, str):
        content = [{"type": "output_text", "text": content}]
    if not isinstance(content, list) or not all(isinstance(part, dict) for part in content):
        raise PolicyFailed(
            f"output item {index} (message) needs 'content' as a str or list of dicts"
        )
    parts = [_complete_part(part) for part in content]
    defaults = {"id": f"msg_{stem}_{index}", "role": "assistant", "status": "completed"}
    return {**defaults, **item, "content": parts}


def _complete_part(part: dict[str, Any]) -> dict[str, Any]:
    if part.get("type") == "output_text":
        return {"annotations": [], "logprobs": [], **part}
    return part


def _complete_function_call(item: dict[str, Any], index: int, stem: str) -> dict[str, Any]:
    if not isinstance(item.get("name"), str):
        raise PolicyFailed(f"output item {index} (function_call) needs a 'name' string")
    arguments = item.get("arguments", "{}")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    defaults = {"id": f"fc_{stem}_{index}", "call_id": f"call_{stem}_{index}"}
    return {**defaults, "status": "completed", **item, "arguments": arguments}


def _estimate_usage(output: list[dict[str, Any]], input_bytes: int, prefix_bytes: int) -> Usage:
    sizes = [(item["type"], len(_canonical_item(item))) for item in output]
    reasoning = sum(size for kind, size in sizes if kind == "reasoning")
    return Usage(
        input_tokens=input_bytes // BYTES_PER_TOKEN,
        cached_tokens=prefix_bytes // BYTES_PER_TOKEN,
        output_tokens=sum(size for _, size in sizes) // BYTES_PER_TOKEN,
        reasoning_tokens=reasoning // BYTES_PER_TOKEN,
    )


def _canonical_item(item: dict[str, Any]) -> bytes:
    text = json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return (text + "\n").encode("utf-8")
