"""Exposed MCP tool names, input schemas, result text and HTTP headers: no servers needed."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import mcp_types as types
import pytest

from corral.agents import McpServerConfig
from corral.orchestrator.services.mcp import (
    McpConnectFailed,
    NameBook,
    result_to_output,
    sanitize_input_schema,
)
from corral.orchestrator.services.mcp._connection import http_headers

SERVERS = ["time", "server.one", "my server", "s", "a.b", "a_b"]


@pytest.mark.parametrize(
    ("server", "tool", "exposed"),
    [
        ("time", "get_current_time", "mcp__time__get_current_time"),
        ("server.one", "tool.two.three", "mcp__server_one__tool_two_three"),
        ("server.one", "tool-two", "mcp__server_one__tool-two"),
        ("my server", "dö it!", "mcp__my_server__d__it_"),
        ("s", "", "mcp__s___"),
        ("s", "x" * 56, "mcp__s__" + "x" * 56),
        ("s", "x" * 80, "mcp__s__" + "x" * 43 + "_56501968c8db"),
        ("a.b", "t", "mcp__a_b__t"),
        ("a_b", "t", "mcp__a_b_eb2980a5a244__t"),
    ],
)
def test_exposed_names_follow_the_table(server: str, tool: str, exposed: str) -> None:
    assert NameBook(SERVERS).name(server, tool) == exposed


def test_every_exposed_name_is_valid_for_the_model_apis() -> None:
    book = NameBook(SERVERS)
    for server in SERVERS:
        for tool in ["x" * 200, "ünïcødé/tool", "a b c", "", "emoji 🙂"]:
            name = book.name(server, tool)
            assert re.fullmatch(r"[a-zA-Z0-9_-]+", name)
            assert len(name.encode()) <= 64


def test_a_cut_name_ends_in_the_hash_of_the_full_original_name() -> None:
    name = NameBook(["s"]).name("s", "x" * 80)
    digest = hashlib.sha1(("mcp__s__" + "x" * 80).encode()).hexdigest()[:12]
    assert len(name) == 64 and name.endswith("_" + digest)


def test_tools_whose_names_collide_after_sanitizing_get_a_hash_in_sorted_order() -> None:
    book = NameBook(["s"])
    names = book.names_for("s", ["a_b", "a.b"])
    digest = hashlib.sha1(b"mcp__s__a_b").hexdigest()[:12]
    assert names == {"a.b": "mcp__s__a_b", "a_b": f"mcp__s__a_b_{digest}"}


def test_a_tool_keeps_its_name_when_the_list_is_fetched_again() -> None:
    book = NameBook(["s"])
    first = book.names_for("s", ["b.c", "zeta"])
    book.names_for("s", ["b_c"])  # appears later and must not take an existing name
    assert book.names_for("s", ["zeta", "b.c"]) == first


def test_a_schema_without_type_or_properties_becomes_an_object_with_properties() -> None:
    assert sanitize_input_schema({}) == {"type": "object", "properties": {}}
    assert sanitize_input_schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert sanitize_input_schema(None) == {"type": "object", "properties": {}}


def test_missing_types_are_inferred_and_arrays_get_items() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast", "slow"]},
            "level": {"enum": [1, 2, 3]},
            "ratio": {"minimum": 0},
            "tags": {"type": "array"},
            "filter": {"properties": {"name": {}}},
            "either": {"anyOf": [{"type": "string"}, {"const": True}]},
        },
        "required": ["mode"],
    }
    props = sanitize_input_schema(schema)["properties"]
    assert props["mode"] == {"enum": ["fast", "slow"], "type": "string"}
    assert props["level"]["type"] == "integer"
    assert props["ratio"]["type"] == "number"
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["filter"] == {"type": "object", "properties": {"name": {"type": "string"}}}
    assert props["either"] == {"anyOf": [{"type": "string"}, {"const": True, "type": "boolean"}]}
    assert "type" not in schema["properties"]["mode"], "the server's schema is not changed"


def test_text_blocks_are_joined_and_other_content_is_summarised() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(text="first"),
            types.ImageContent(data="AAAA", mime_type="image/png"),
            types.ResourceLink(uri="file:///a.txt", name="a.txt"),
            types.EmbeddedResource(
                resource=types.TextResourceContents(uri="file:///b.txt", text="inside b")
            ),
        ]
    )
    output = result_to_output("mcp__s__t", result)
    assert output.success
    assert (
        output.text
        == "first\n[image: image/png, 3 bytes]\n[resource link: file:///a.txt (a.txt)]\ninside b"
    )


def test_an_error_result_is_a_failed_output_and_structured_content_is_json() -> None:
    failed = types.CallToolResult(content=[types.TextContent(text="boom")], is_error=True)
    assert not result_to_output("mcp__s__t", failed).success
    empty_error = types.CallToolResult(content=[], is_error=True)
    assert result_to_output("mcp__s__t", empty_error).text == "mcp__s__t failed without saying why"
    structured = types.CallToolResult(content=[], structured_content={"n": 1})
    assert result_to_output("mcp__s__t", structured).text == '{"n": 1}'


def test_http_headers_come_from_the_config_and_the_environment() -> None:
    config = McpServerConfig(
        url="http://127.0.0.1:9/mcp",
        headers={"X-Static": "1"},
        env_http_headers={"X-Team": "TEAM_VAR", "X-Unset": "UNSET_VAR"},
        bearer_token_env_var="TOKEN_VAR",
    )
    env = {"TEAM_VAR": "blue", "TOKEN_VAR": "s3cret"}
    assert http_headers(config, env) == {
        "X-Static": "1",
        "X-Team": "blue",
        "Authorization": "Bearer s3cret",
    }
    with pytest.raises(McpConnectFailed, match="TOKEN_VAR \\(bearer_token_env_var\\) is not set"):
        http_headers(config, {})
