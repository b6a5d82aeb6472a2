"""Which tools declare side effects: what a resumed agent may run again on its own."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from pydantic import BaseModel

from corral.agents import CorralConfig
from corral.orchestrator._run import ToolScope
from corral.orchestrator.fanout._report import ResultSlot, report_result_tool
from corral.orchestrator.fanout._schema import ResultSchema
from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services.mcp._manager import _read_only
from corral.orchestrator.services.toolsearch import DeferredTools
from corral.orchestrator.supervisor._tools import collab_tool_providers
from corral.tools import Tool, ToolContext, ToolOutput, ToolRegistry, build_core_registry
from corral.tools._core_tools import core_tool_names

READ_ONLY_CORE = {"read_file", "grep", "list_dir", "update_plan", "view_image"}
READ_ONLY_COLLAB = {"wait_agent", "list_agents"}


def test_the_core_tools_that_only_read_say_so_and_the_rest_count_as_side_effecting() -> None:
    registry = build_core_registry(core_tool_names())
    declared = {name: registry.get(name) for name in registry.names}
    assert {n for n, t in declared.items() if t is not None and not t.side_effects} == (
        READ_ONLY_CORE
    )
    assert {"shell", "apply_patch"} <= {n for n, t in declared.items() if t and t.side_effects}


def test_of_the_collaboration_tools_only_waiting_and_listing_are_free_of_side_effects() -> None:
    # Built for their schemas only: a scope without the run's agents, as on Temporal.
    scope = ToolScope(agent_id="a", agents=CorralConfig().agents)
    tools = {name: make(scope) for name, make in collab_tool_providers().items()}
    assert {n for n, t in tools.items() if not t.side_effects} == READ_ONLY_COLLAB


def test_report_result_and_tool_search_are_free_of_side_effects() -> None:
    schema = ResultSchema({"type": "object", "properties": {}})
    assert not report_result_tool(ResultSlot(0, schema, max_tries=3)).side_effects
    search = DeferredTools(HashingEmbedder()).tool_search_tool(ToolRegistry())
    assert not search.side_effects


def test_a_tool_without_the_flag_counts_as_side_effecting() -> None:
    async def handler(args: Any, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("ok")

    tool: Tool[Any] = Tool("mine", "a tool", BaseModel, handler, mutating=False)
    assert tool.side_effects


def mcp_tool(**hints: Any) -> types.Tool:
    annotations = types.ToolAnnotations(**hints) if hints else None
    return types.Tool(name="t", input_schema={"type": "object"}, annotations=annotations)


@pytest.mark.parametrize(
    ("hints", "read_only"),
    [
        ({}, False),
        ({"read_only_hint": True}, True),
        ({"read_only_hint": True, "destructive_hint": False}, True),
        ({"read_only_hint": True, "destructive_hint": True}, False),
        ({"read_only_hint": False}, False),
        ({"destructive_hint": False}, False),
        ({"idempotent_hint": True}, False),
    ],
)
def test_an_mcp_tool_is_repeatable_only_when_annotated_read_only_and_not_destructive(
    hints: dict[str, Any], read_only: bool
) -> None:
    assert _read_only(mcp_tool(**hints)) is read_only
