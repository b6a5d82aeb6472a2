"""The items of a fan-out: one JSON object per line of a JSON Lines file.

Blank lines are skipped, so an item keeps the number of the line it came from; every other line
must be one JSON object, and the first that is not stops everything with its line number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._input_files import read_input_file
from ._errors import ItemsFileError


@dataclass(frozen=True)
class FanoutItem:
    """One input: its position among the items (0-based), its fields, and where it came from
    (`source` line `line`, 1-based), for messages."""

    index: int
    line: int
    data: dict[str, Any]
    source: str = "items"


def parse_items(text: str, *, source: str = "items") -> list[FanoutItem]:
    """The items of a JSON Lines text; `source` names it in errors."""
    items: list[FanoutItem] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        items.append(FanoutItem(len(items), number, _parse_line(raw, number, source), source))
    return items


def read_items(path: Path) -> list[FanoutItem]:
    """The items of the file at `path`."""
    text = read_input_file(path, "items", ItemsFileError)
    return parse_items(text, source=str(path))


def as_items(items: Sequence[FanoutItem] | Sequence[Mapping[str, Any]]) -> list[FanoutItem]:
    """Items as given to `run_fanout`: already parsed, or plain mappings (line = index + 1)."""
    found: list[FanoutItem] = []
    for index, item in enumerate(items):
        if isinstance(item, FanoutItem):
            found.append(FanoutItem(index, item.line, item.data, item.source))
        elif isinstance(item, Mapping):
            found.append(FanoutItem(index, index + 1, dict(item)))
        else:
            kind = type(item).__name__
            raise ItemsFileError(f"item {index} is a {kind}; each item must be a JSON object")
    return found


def _parse_line(raw: str, number: int, source: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ItemsFileError(
            f"{source} line {number}: not valid JSON ({exc.msg} at column {exc.colno}); "
            "write one JSON object per line"
        ) from exc
    if not isinstance(value, dict):
        kind = _json_kind(value)
        raise ItemsFileError(
            f"{source} line {number}: a JSON {kind}, not an object; write one JSON object per line"
        )
    return value


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"
