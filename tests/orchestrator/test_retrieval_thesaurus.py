"""The thesaurus of software, operations and business words: its lines, one-directional
expansions, phrases read before their words, and `--explain` naming what matched."""

from __future__ import annotations

from corral.orchestrator.cli._retrieval_explain import explanation_json, query_lines
from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services.retrieval._synonyms import (
    expansion_table,
    expansions,
    matched,
)
from corral.orchestrator.services.retrieval._thesaurus_ops import OPS_GROUPS
from corral.orchestrator.services.retrieval._thesaurus_work import WORK_GROUPS
from corral.orchestrator.services.toolsearch import IndexedTool, ToolIndex


def test_the_thesaurus_holds_several_hundred_groups_and_no_term_expands_to_itself() -> None:
    lines = [line for line in (OPS_GROUPS + WORK_GROUPS).splitlines() if line.strip()]
    table = expansion_table()

    assert len(lines) >= 250
    assert all(term not in others and others for term, others in table.items())
    assert all(term.strip() == term and term for term in table)


def test_a_one_directional_line_expands_the_users_words_and_not_the_tools() -> None:
    table = expansion_table()

    assert "gist" in expansions("share it as a quick paste", table)
    assert "quick paste" not in expansions("create a gist", table)
    assert {"silence", "mute"} <= set(expansions("stop the pager tonight", table))


def test_a_word_inside_a_matched_phrase_is_not_expanded_alone() -> None:
    found = dict(matched("stop the pager while we upgrade", expansion_table()))

    assert list(found) == ["stop the pager"]
    assert "cancel" not in expansions("stop the pager", expansion_table())


def test_explain_names_each_matched_word_and_the_terms_it_added() -> None:
    tools = [IndexedTool("mcp__ops__silence", "ops", "create_silence", "Silence an alert.")]
    query = ToolIndex(tools, HashingEmbedder()).explain("stop the pager please", 1)[0]

    lines = query_lines(query.query)
    shown = explanation_json(query.query, query.why)

    assert "synonyms:    stop the pager -> silence, mute" in lines
    assert shown["expanded"] == {"stop the pager": ["silence", "mute"]}
    assert query.why.fields["synonyms"] > 0


def test_a_thesaurus_word_is_never_corrected_into_a_document_word() -> None:
    tools = [
        IndexedTool("mcp__wiki__get_page", "wiki", "get_page", "Get a wiki page."),
        IndexedTool("mcp__ops__silence", "ops", "create_silence", "Silence an alert."),
    ]
    query = ToolIndex(tools, HashingEmbedder()).explain("stop the pager tonight", 1)[0].query

    assert "pager" not in query.corrections
    assert "stop the pager" in query.expanded
