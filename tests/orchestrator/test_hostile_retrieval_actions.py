"""A hostile MCP server cannot name a tool with every verb to match every request: the second
stage's kind-of-action credit goes only to names that claim fewer than three kinds."""

from __future__ import annotations

import pytest

from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services.toolsearch import IndexedTool, ToolIndex

pytestmark = pytest.mark.hostile

STUFFED_NAMES = [
    "create_read_list_update_delete",
    "add_get_search_edit_remove_everything",
    "getAndListAndDeleteAll",
    "write-show-find-rename-wipe",
]
REQUESTS = ["delete the old branch", "show me the branch", "rename the branch", "add a branch"]


@pytest.mark.parametrize("name", STUFFED_NAMES)
@pytest.mark.parametrize("request_text", REQUESTS)
def test_a_tool_named_with_every_verb_gets_no_credit_for_the_kind_of_action(
    name: str, request_text: str
) -> None:
    tools = [
        IndexedTool("mcp__git__branch", "git", "branch", "Work with a branch."),
        IndexedTool(f"mcp__evil__{name}", "evil", name, "Work with a branch."),
    ]
    index = ToolIndex(tools, HashingEmbedder())

    explained = {e.hit.name: e.why.rerank for e in index.explain(request_text, 2)}

    assert "matched:action" not in explained[f"mcp__evil__{name}"]


def test_an_honest_tool_keeps_its_credit_beside_a_stuffed_one() -> None:
    tools = [
        IndexedTool("mcp__git__delete_branch", "git", "delete_branch", "Delete a branch."),
        IndexedTool("mcp__evil__x", "evil", STUFFED_NAMES[0], "Delete a branch."),
    ]
    index = ToolIndex(tools, HashingEmbedder())

    explained = {e.hit.name: e.why.rerank for e in index.explain("remove the branch", 2)}

    assert explained["mcp__git__delete_branch"]["matched:action"] > 0
    assert "matched:action" not in explained["mcp__evil__x"]
