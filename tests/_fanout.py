"""Scripted fan-out workers the fan-out tests share: items `{"n": N}` under a template that
starts `Item {n}:`, the schema of their result, and the worker that reports its number."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
"""A result that is the item's number."""

_ITEM = re.compile(r"Item (\d+):")


def item_of(request: dict[str, Any]) -> int:
    """The number of the item a worker's request is about (its template says `Item N:`)."""
    return int(_ITEM.findall(json.dumps(request["input"]))[-1])


def outputs(request: dict[str, Any]) -> list[str]:
    """The outputs of the tool calls in a request, oldest first."""
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"]


def report(arguments: Any) -> list[dict[str, Any]]:
    """An answer that calls `report_result` with `arguments`."""
    return [{"type": "function_call", "name": "report_result", "arguments": json.dumps(arguments)}]


def report_then_answer(request: dict[str, Any]) -> Any:
    """A worker that reports its item's number, then answers."""
    if outputs(request):
        return "reported"
    return report({"n": item_of(request)})


def fanout_workspace(root: Path, items: int) -> Path:
    """A folder holding `items.jsonl` (items 0 to `items` - 1) and `schema.json` (`SCHEMA`), as
    `corral fanout --items items.jsonl --schema schema.json` reads them."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "items.jsonl").write_text("".join(json.dumps({"n": n}) + "\n" for n in range(items)))
    (root / "schema.json").write_text(json.dumps(SCHEMA))
    return root
