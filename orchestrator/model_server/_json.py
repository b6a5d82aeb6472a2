"""JSON for the server's hot path: orjson's speed, with exactly the bytes the `json` module writes.

The server's answers and its prefix-cache figures are defined by `json.dumps` (compact, non-ASCII
kept; sorted keys for the canonical bytes). orjson writes the same bytes for every JSON value
except a few: floats below 1e-4 (`0.00001` for `1e-05`), NaN and the infinities (`null`), integers
past 64 bits and strings holding a lone surrogate (both refused). So a value goes through orjson
only when it is known to hold none of these, and through `json` otherwise:

- a parsed request body is `Checked` when its floats all print alike and it holds no `NaN` or
  `Infinity` (found while parsing, by `json`'s own hooks); orjson refuses the rest itself;
- anything else (a policy's output) is walked once by `is_plain` before orjson may write it.

`holds_lone_surrogate` finds the strings no UTF-8 can carry, and `nests_deeper_than` the bodies
nested deeper than the server's own writes can follow, both of which the server refuses.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class Checked:
    """What parsing found: whether the body's values may be written by orjson."""

    __slots__ = ("plain",)

    def __init__(self) -> None:
        self.plain = True

    def float_from(self, text: str) -> float:
        value = float(text)
        if self.plain and not _prints_alike(value):
            self.plain = False
        return value

    def constant(self, name: str) -> float:
        self.plain = False  # NaN, Infinity, -Infinity: orjson writes them as null
        return float(name)


def parse(raw: bytes) -> tuple[Any, Checked]:
    """`json.loads(raw)`, and whether orjson would write the result back exactly.

    Raises what `json.loads` raises.
    """
    checked = Checked()
    value = json.loads(raw, parse_float=checked.float_from, parse_constant=checked.constant)
    return value, checked


def dumps(value: Any, *, plain: bool, sort_keys: bool = False) -> bytes:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=...)` in UTF-8.

    `plain`: `value` is known to hold no float that prints differently, no NaN or infinity
    (a `Checked` body, or `is_plain`); orjson then writes it, unless it refuses.
    """
    if plain:
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0)
        except orjson.JSONEncodeError:
            pass  # a big integer or a lone surrogate: `json` writes (or refuses) it as before
    text = json.dumps(value, sort_keys=sort_keys, ensure_ascii=False, separators=(",", ":"))
    return text.encode()


def private_copy(value: Any, *, plain: bool) -> Any:
    """A deep copy of a parsed JSON value (`plain` as for `dumps`): a policy may change its own."""
    if plain:
        try:
            return orjson.loads(orjson.dumps(value))
        except orjson.JSONEncodeError:
            pass  # a big integer (orjson would read it back as a float), or deep nesting
    # `json` reads back exactly what it wrote (NaN, big integers and lone surrogates too).
    return json.loads(json.dumps(value))


def holds_lone_surrogate(raw: bytes, value: Any) -> bool:
    """Whether parsed `value` (read from `raw`) holds a string no UTF-8 can carry: a lone
    `\\ud800`-`\\udfff` escape. Only an escape can bring one, so most bodies are not walked."""
    if _SURROGATE_ESCAPE.search(raw) is None:
        return False
    stack = [value]
    while stack:  # not recursive: the body may nest as deep as `json` would read
        item = stack.pop()
        if type(item) is str:
            try:
                item.encode()
            except UnicodeEncodeError:
                return True
        elif type(item) is list:
            stack.extend(item)
        elif type(item) is dict:
            stack.extend(item)
            stack.extend(item.values())
    return False


def nests_deeper_than(raw: bytes, value: Any, limit: int) -> bool:
    """Whether parsed `value` (read from `raw`) holds arrays and objects more than `limit` deep
    (the outermost counts one). Only a body with more than `limit` brackets can, so most bodies
    are not walked."""
    if raw.count(b"[") + raw.count(b"{") <= limit or type(value) not in (dict, list):
        return False
    stack = [(value, 1)]
    while stack:  # not recursive, as for `holds_lone_surrogate`
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if type(item) is dict else item
        stack.extend((c, depth + 1) for c in children if type(c) is dict or type(c) is list)
    return False


def is_plain(value: Any) -> bool:
    """Whether orjson writes `value` exactly as `json` would: JSON's own types only (dicts with
    string keys), and floats that print alike."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return _prints_alike(value)
    if kind is list:
        return all(is_plain(item) for item in value)
    if kind is dict:
        return all(type(k) is str and is_plain(v) for k, v in value.items())
    return False


def _prints_alike(value: float) -> bool:
    return orjson.dumps(value) == float.__repr__(value).encode()
