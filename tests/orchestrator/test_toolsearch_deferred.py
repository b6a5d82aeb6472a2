"""Deferred MCP tools: Codex's threshold, and `tool_search` loading what it finds into an
agent's registry so the tools are callable on the next turn. The tools are the real MCP
catalogs, as corral `Tool`s with raw JSON schemas; the embedder is the hashing twin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services.toolsearch import (
    EMPTY_QUERY_MESSAGE,
    DeferredTool,
    DeferredTools,
    IndexedTool,
    load_catalog,
    visible_tools,
)
from corral.tools import PermissionProfile, Tool, ToolCall, ToolContext, ToolOutput, ToolRegistry

from .._shared import shared_data


class AnyArgs(BaseModel):
    model_config = ConfigDict(extra="allow")


def as_mcp_tool(entry: IndexedTool) -> DeferredTool:
    async def call(args: AnyArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(f"{entry.tool} ran with {json.dumps(args.model_dump())}")

    schema = {
        "type": "object",
        "properties": {
            p: {"type": "string", "description": d} for p, d in entry.parameters.items()
        },
    }
    tool = Tool(entry.name, entry.description, AnyArgs, call, schema=schema)
    return DeferredTool(tool, entry.server, entry.tool)


@pytest.fixture(scope="module")
def mcp_tools() -> list[DeferredTool]:
    return [as_mcp_tool(entry) for entry in load_catalog(shared_data("tools"))]


def context(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, profile=PermissionProfile())


async def call(
    registry: ToolRegistry, name: str, arguments: dict[str, Any], tmp_path: Path
) -> ToolOutput:
    return await registry.dispatch(ToolCall("c1", name, json.dumps(arguments)), context(tmp_path))


def test_mcp_tools_are_sent_directly_below_100_and_deferred_from_100(
    mcp_tools: list[DeferredTool],
) -> None:
    tools = [entry.tool for entry in mcp_tools]

    below = visible_tools(tools[:99])
    at = visible_tools(tools[:100])

    assert (len(below.direct), below.deferred, below.defers) == (99, (), False)
    assert (at.direct, len(at.deferred), at.defers) == ((), 100, True)
    assert visible_tools(tools[:10], threshold=10).defers


@pytest.mark.anyio
async def test_tool_search_appends_found_tools_once_and_they_answer_the_next_call(
    mcp_tools: list[DeferredTool], tmp_path: Path
) -> None:
    deferred = DeferredTools(HashingEmbedder())
    await deferred.rebuild(mcp_tools)
    registry = ToolRegistry()
    registry.register(deferred.tool_search_tool(registry))
    text = "take a screenshot of the page"
    query: dict[str, Any] = {"query": text, "limit": 3}
    expected = [hit.name for hit in deferred.index.search(text, 3)]

    first = await call(registry, "tool_search", query, tmp_path)
    version = registry.version
    again = await call(registry, "tool_search", {**query, "limit": 4}, tmp_path)
    screenshot = await call(
        registry, "mcp__playwright__browser_take_screenshot", {"type": "png"}, tmp_path
    )

    assert first.success and "mcp__playwright__browser_take_screenshot" in expected
    assert registry.names[:4] == ["tool_search", *expected]
    assert first.text.count("[loaded now]") == 3
    assert again.text.count("[loaded now]") == 1
    assert registry.version == version + 1 == 5
    assert len(registry.names) == len(set(registry.names)) == 5
    assert screenshot.text == 'browser_take_screenshot ran with {"type": "png"}'


@pytest.mark.anyio
async def test_an_empty_query_is_a_failed_output_and_loads_nothing(
    mcp_tools: list[DeferredTool], tmp_path: Path
) -> None:
    deferred = DeferredTools(HashingEmbedder())
    await deferred.rebuild(mcp_tools[:5])
    registry = ToolRegistry()
    registry.register(deferred.tool_search_tool(registry))

    output = await call(registry, "tool_search", {"query": "  "}, tmp_path)

    assert output == ToolOutput(EMPTY_QUERY_MESSAGE, success=False)
    assert registry.names == ["tool_search"]


@pytest.mark.anyio
async def test_a_rebuild_replaces_the_tools_that_tool_search_finds(
    mcp_tools: list[DeferredTool],
) -> None:
    slack = [t for t in mcp_tools if t.server == "slack"]
    stripe = [t for t in mcp_tools if t.server == "stripe"]
    deferred = DeferredTools(HashingEmbedder())

    await deferred.rebuild(slack)
    before = await deferred.search("refund a payment", 3)
    await deferred.rebuild(stripe)
    after = await deferred.search("refund a payment", 3)

    assert {hit.server for hit in before} == {"slack"}
    assert after[0].name == "mcp__stripe__create_refund"
    assert deferred.get("mcp__slack__channels_list") is None
