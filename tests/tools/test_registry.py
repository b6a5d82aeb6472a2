"""The file tools in a registry: specs both APIs accept, and calls that go wrong safely."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openai.types.chat import ChatCompletionFunctionTool
from openai.types.responses import FunctionTool

from corral.tools import (
    PermissionProfile,
    ToolCall,
    ToolContext,
    ToolRegistry,
    strict_json_schema,
)
from corral.tools._file_tools import file_tools

NAMES = ["read_file", "list_dir", "grep", "apply_patch", "update_plan"]


def _registry() -> ToolRegistry:
    return ToolRegistry(file_tools())


def _objects(schema: Any) -> list[dict[str, Any]]:
    """Every object schema inside `schema`."""
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found.extend(_objects(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(_objects(value))
    return found


def test_specs_are_byte_stable_across_registries() -> None:
    first, second = _registry(), _registry()
    assert json.dumps(first.responses_tools()) == json.dumps(second.responses_tools())
    assert json.dumps(first.chat_tools()) == json.dumps(second.chat_tools())
    assert first.names == NAMES


def test_specs_have_the_shape_each_api_expects() -> None:
    registry = _registry()
    responses = [FunctionTool.model_validate(spec) for spec in registry.responses_tools()]
    chat = [ChatCompletionFunctionTool.model_validate(spec) for spec in registry.chat_tools()]
    assert [t.name for t in responses] == NAMES
    assert [t.function.name for t in chat] == NAMES
    assert all(t.strict for t in responses) and all(t.function.strict for t in chat)
    assert all(t.description for t in responses) and all(t.function.description for t in chat)


def test_schemas_are_strict_valid_json_schema() -> None:
    for spec in _registry().responses_tools():
        schema = spec["parameters"]
        Draft202012Validator.check_schema(schema)
        for node in _objects(schema):
            assert node["additionalProperties"] is False, spec["name"]
            assert node["required"] == list(node["properties"]), spec["name"]


def test_schemas_accept_a_real_call_and_reject_extra_fields() -> None:
    schemas = {s["name"]: s["parameters"] for s in _registry().responses_tools()}
    grep = Draft202012Validator(schemas["grep"])
    assert grep.is_valid({"pattern": "x", "path": None, "include": None, "limit": None})
    assert not grep.is_valid({"pattern": "x", "path": ".", "include": None, "limit": 5, "x": 1})


async def _dispatch(tmp_path: Path, name: str, arguments: str) -> tuple[bool, str]:
    ctx = ToolContext(
        cwd=tmp_path, profile=PermissionProfile.for_workspace("workspace-write", tmp_path)
    )
    out = await _registry().dispatch(ToolCall("call-1", name, arguments), ctx)
    return out.success, out.text


@pytest.mark.anyio
async def test_unknown_tool_comes_back_as_a_failed_output_naming_it(tmp_path: Path) -> None:
    answer = await _dispatch(tmp_path, "write_file", "{}")
    assert answer == (
        False,
        "unknown tool 'write_file'; available tools: " + ", ".join(NAMES),
    )


@pytest.mark.anyio
async def test_bad_arguments_come_back_as_failed_outputs_naming_the_problem(tmp_path: Path) -> None:
    not_json = await _dispatch(tmp_path, "read_file", "{path: a}")
    missing = await _dispatch(tmp_path, "apply_patch", "{}")
    wrong_type = await _dispatch(tmp_path, "list_dir", '{"depth": "deep"}')
    extra = await _dispatch(tmp_path, "grep", '{"pattern": "x", "regex": true}')
    assert not_json[0] is False and not_json[1].startswith(
        "invalid arguments for read_file: not a JSON"
    )
    assert missing == (False, "invalid arguments for apply_patch: input: Field required")
    assert wrong_type[0] is False and wrong_type[1].startswith(
        "invalid arguments for list_dir: depth:"
    )
    assert extra[0] is False and "regex: Extra inputs are not permitted" in extra[1]


@pytest.mark.anyio
async def test_nulls_for_optional_arguments_mean_their_defaults(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    answer = await _dispatch(
        tmp_path, "read_file", '{"path": "a.txt", "offset": null, "limit": null}'
    )
    assert answer == (True, "L1: hello")


def test_registries_share_one_parameters_schema_and_callers_still_get_their_own_copy() -> None:
    # Every agent of a run offers the same tools: their schemas are parsed once, not per agent.
    first, second = _registry(), _registry()
    pairs = zip(first.responses_tools(), second.responses_tools(), strict=True)
    assert all(a["parameters"] is b["parameters"] for a, b in pairs)
    tool = first.get("read_file")
    assert tool is not None
    copy = strict_json_schema(tool.args)
    copy["properties"].clear()
    assert tool.parameters_schema()["properties"], "a caller's copy is its own"
