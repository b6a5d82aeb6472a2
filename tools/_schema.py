"""JSON schemas for tool arguments in the strict form both model APIs accept.

Strict mode wants every property listed in `required` and `additionalProperties: false` on
every object; optional fields become nullable instead. Output is deterministic: keys sorted
the same way on every call, so the request prefix stays byte-stable.
"""

from __future__ import annotations

import json
import weakref
from typing import Any

from pydantic import BaseModel


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The strict, inlined JSON schema of `model`, a fresh copy the caller may change."""
    strict: dict[str, Any] = json.loads(_strict_schema_text(model))
    return strict


def shared_strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The same schema as `strict_json_schema`, but one object shared by every caller: read it,
    never change it. Every agent of a run offers the same tools; a parsed copy per agent cost
    about 20 KB of memory and a JSON parse per tool at each agent's start."""
    shared = _parsed.get(model)
    if shared is None:
        shared = _parsed[model] = strict_json_schema(model)
    return shared


_made: weakref.WeakKeyDictionary[type[BaseModel], str] = weakref.WeakKeyDictionary()
"""Schemas made so far, as JSON text; weak, so argument models made on the fly can go."""
_parsed: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


def _strict_schema_text(model: type[BaseModel]) -> str:
    # Generating a schema costs about 3 ms a tool; every agent of a run asks again for the same
    # tools, so it is made once per argument model and handed out as parsed copies.
    text = _made.get(model)
    if text is None:
        raw = model.model_json_schema()
        defs = raw.pop("$defs", {})
        text = _made[model] = json.dumps(_strictify(_inline(raw, defs)))
    return text


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            merged = {
                **defs[ref.removeprefix("#/$defs/")],
                **{k: v for k, v in node.items() if k != "$ref"},
            }
            return _inline(merged, defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _strictify(node: Any) -> Any:
    if isinstance(node, list):
        return [_strictify(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: _strictify(v) for k, v in node.items() if k not in ("title", "default")}
    if node.get("type") == "object" and "properties" in node:
        props: dict[str, Any] = node["properties"]
        required = set(node.get("required", []))
        for name, spec in props.items():
            if name not in required:
                props[name] = _nullable(spec)
        node["required"] = list(props)
        node["additionalProperties"] = False
    return node


def _nullable(spec: dict[str, Any]) -> dict[str, Any]:
    options = spec.get("anyOf")
    if isinstance(options, list):
        if any(o.get("type") == "null" for o in options):
            return spec
        return {**spec, "anyOf": [*options, {"type": "null"}]}
    kind = spec.get("type")
    if isinstance(kind, str):
        return {**spec, "type": [kind, "null"]}
    return {"anyOf": [spec, {"type": "null"}]}
