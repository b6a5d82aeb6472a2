"""The result schema: checked with `jsonschema`, shaped into `report_result`'s parameters.

A function tool's parameters must be an object schema. An object schema is used as it is; any
other schema is wrapped as the one property `result` (its `$defs` and `$schema` move up to the
wrapper so references still resolve) and unwrapped again when a result arrives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from .._input_files import read_input_file
from ._errors import ResultSchemaError

MAX_REPORTED_ERRORS = 5
_HOISTED = ("$schema", "$defs", "definitions", "$id")


class ResultSchema:
    """A valid JSON Schema for one item's result; `validate` judges a `report_result` call."""

    def __init__(self, schema: Any, *, source: str = "the result schema") -> None:
        cls = _validator_class(schema)
        try:
            cls.check_schema(schema)
        except SchemaError as exc:
            raise ResultSchemaError(
                f"{source} is not a valid JSON Schema: at {exc.json_path}: {exc.message}"
            ) from exc
        self.schema = schema
        self.wrapped = not (isinstance(schema, dict) and schema.get("type") == "object")
        self.parameters = _wrap(schema) if self.wrapped else schema
        self._validator: Validator = cls(self.parameters)

    @classmethod
    def load(cls, path: Path) -> ResultSchema:
        """The schema in the JSON file at `path`."""
        text = read_input_file(path, "schema", ResultSchemaError)
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ResultSchemaError(
                f"schema file {path} is not valid JSON: {exc.msg} at line {exc.lineno} "
                f"column {exc.colno}"
            ) from exc
        return cls(raw, source=f"schema file {path}")

    def problems(self, arguments: Any) -> list[str]:
        """What is wrong with `arguments` (a call's parsed JSON), as `PATH: message` lines."""
        errors = sorted(self._validator.iter_errors(arguments), key=lambda e: e.json_path)
        lines = [f"{error.json_path}: {error.message}" for error in errors]
        if len(lines) > MAX_REPORTED_ERRORS:
            more = len(lines) - MAX_REPORTED_ERRORS
            lines = [*lines[:MAX_REPORTED_ERRORS], f"... and {more} more"]
        return lines

    def result_of(self, arguments: dict[str, Any]) -> Any:
        """The result a valid call carries."""
        return arguments["result"] if self.wrapped else arguments


def _validator_class(schema: Any) -> type[Validator]:
    if not isinstance(schema, dict | bool):
        kind = type(schema).__name__
        raise ResultSchemaError(
            f"the result schema is a JSON {kind}; a JSON Schema is an object (or true/false)"
        )
    cls: type[Validator] = validator_for(schema, default=Draft202012Validator)
    return cls


def _wrap(schema: Any) -> dict[str, Any]:
    inner = dict(schema) if isinstance(schema, dict) else schema
    wrapper: dict[str, Any] = {}
    if isinstance(inner, dict):
        for key in _HOISTED:
            if key in inner:
                wrapper[key] = inner.pop(key)
    wrapper.update(
        type="object",
        properties={"result": inner},
        required=["result"],
        additionalProperties=False,
    )
    return wrapper
