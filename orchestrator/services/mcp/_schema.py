"""Input schemas of MCP tools, made acceptable to both model APIs.

Servers send any JSON Schema; the APIs want an object at the top with `properties`, a `type` on
every plain sub-schema and `items` on arrays. Missing types are inferred the way Codex does
(from `properties`, `items`, `enum`, numeric bounds...), and a schema that says nothing becomes
a string. The server's own schema is never changed in place.
"""

from __future__ import annotations

from typing import Any

_OBJECT_KEYS = ("properties", "required", "additionalProperties", "patternProperties")
_ARRAY_KEYS = ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")
_STRING_KEYS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_COMBINATORS = ("anyOf", "oneOf", "allOf", "$ref", "not")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def sanitize_input_schema(schema: object) -> dict[str, Any]:
    """An object schema with `properties`, every sub-schema typed; anything else: no arguments."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}
    result = _sanitize(schema)
    result["type"] = "object"
    if not isinstance(result.get("properties"), dict):
        result["properties"] = {}
    return result


def _sanitize(schema: object) -> dict[str, Any]:
    if not isinstance(schema, dict):
        # `true`, `false` and junk: a plain value the model can fill in.
        return {"type": "string"}
    result = dict(schema)
    for key in _SCHEMA_MAPS:
        if isinstance(result.get(key), dict):
            result[key] = {name: _sanitize(sub) for name, sub in result[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(result.get(key), list):
            result[key] = [_sanitize(sub) for sub in result[key]]
    for key in ("items", "additionalProperties", "not"):
        if isinstance(result.get(key), dict):
            result[key] = _sanitize(result[key])
    if "type" not in result and not any(key in result for key in _COMBINATORS):
        result["type"] = _infer_type(result)
    if _has_type(result, "array") and "items" not in result and "prefixItems" not in result:
        result["items"] = {"type": "string"}
    if _has_type(result, "object") and not isinstance(result.get("properties"), dict):
        result["properties"] = {}
    return result


def _infer_type(schema: dict[str, Any]) -> str:
    for values_key in ("enum", "const"):
        if values_key in schema:
            values = schema[values_key]
            return _type_of_values(values if isinstance(values, list) else [values])
    for keys, kind in (
        (_OBJECT_KEYS, "object"),
        (_ARRAY_KEYS, "array"),
        (_NUMBER_KEYS, "number"),
        (_STRING_KEYS, "string"),
    ):
        if any(key in schema for key in keys):
            return kind
    return "string"


def _type_of_values(values: list[Any]) -> str:
    if values and all(isinstance(v, bool) for v in values):
        return "boolean"
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "integer"
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "number"
    return "string"


def _has_type(schema: dict[str, Any], kind: str) -> bool:
    declared = schema.get("type")
    return declared == kind or (isinstance(declared, list) and kind in declared)
