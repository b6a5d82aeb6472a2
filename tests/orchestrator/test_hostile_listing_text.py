"""What `corral tools search`, `corral skills list|match` and `corral mcp list` print, against
text a hostile MCP server or a hostile SKILL.md (or its folder's name) controls: escape
sequences that clear the screen, retitle the window or write the clipboard, carriage returns
and backspaces that overwrite a line, bidi overrides that reorder it. Every one is spelled out,
with or without `--explain`, as errors and approval questions already spell them."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.cli._mcp import format_statuses
from corral.orchestrator.cli._skills import _explained, _table, _unavailable_lines
from corral.orchestrator.cli._tools import format_explained, format_hits
from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services.mcp import McpServerStatus, ServerState
from corral.orchestrator.services.skills import Skill, SkillCatalog, SkillMatcher
from corral.orchestrator.services.skills._model import UnavailableSkill
from corral.orchestrator.services.toolsearch import IndexedTool, ToolIndex
from tests._terminal import HOSTILE_TEXT, acting

pytestmark = pytest.mark.hostile

HOSTILE = HOSTILE_TEXT


def assert_spelled(output: str) -> None:
    raw = acting(output, allowed="\n")  # a line break of our own is the one allowed
    assert not raw, f"printed raw: {raw}"


def hostile_tools(text: str) -> list[IndexedTool]:
    return [
        IndexedTool(
            name="mcp__evil__read_file",
            server=f"evil{text}",
            tool="read_file",
            description=f"Read a file from disk {text} and more.",
            parameters={"path": f"the path {text}"},
        ),
        IndexedTool(name="mcp__good__list", server="good", tool="list", description="List files."),
    ]


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_tool_search_spells_out_what_a_server_wrote(text: str) -> None:
    index = ToolIndex(hostile_tools(text), HashingEmbedder())

    assert_spelled(format_hits(index.search("read a file from disk", 5), index))
    assert_spelled(format_explained(index.explain(f"read a file {text}", 5), index))


def hostile_skill(text: str, tmp_path: Path) -> Skill:
    folder = tmp_path / f"skill{text.replace('/', '_')}"
    return Skill(
        name=f"evil{text}",
        description=f"Deploy the site {text} to production",
        path=folder / "SKILL.md",
        scope="project",
        content="body",
    )


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_skill_listings_spell_out_what_a_skill_wrote(text: str, tmp_path: Path) -> None:
    skill = hostile_skill(text, tmp_path)
    matcher = SkillMatcher(SkillCatalog((skill,)), HashingEmbedder())

    assert_spelled(_table([(None, skill)]))
    assert_spelled(_table([(0.5, skill)]))
    assert_spelled(_unavailable_lines([UnavailableSkill(skill, (f"env X{text}",))]))
    assert_spelled(_explained(matcher.explain("deploy the site", 3), as_json=False))


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_mcp_list_spells_out_a_servers_error(text: str) -> None:
    status = McpServerStatus(
        name="evil",
        state=ServerState.FAILED,
        transport="stdio",
        tools=(),
        error=f"the server said {text}",
    )
    assert_spelled(format_statuses([status]))


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_json_output_escapes_what_a_terminal_would_act_on_and_reads_back_the_same(
    text: str, tmp_path: Path
) -> None:
    import json

    from corral.orchestrator.cli._json_out import json_text

    skill = hostile_skill(text, tmp_path)
    matcher = SkillMatcher(SkillCatalog((skill,)), HashingEmbedder())
    explained = _explained(matcher.explain("deploy the site", 3), as_json=True)
    value = {"name": skill.name, "nested": [skill.description]}

    for output in (explained, json_text(value)):
        assert_spelled(output)
    assert json.loads(json_text(value)) == value, "the same data to any JSON reader"
