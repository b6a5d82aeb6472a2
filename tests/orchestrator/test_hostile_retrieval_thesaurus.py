"""A query or a tool description stuffed with thesaurus words gains no unbounded boost: a query
adds at most `MAX_EXPANSIONS` stems however many thesaurus words it holds, and a document earns
each matched word's synonyms once, by its best term, however many of them it holds."""

from __future__ import annotations

import pytest

from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services.retrieval._synonyms import (
    MAX_EXPANSIONS,
    MAX_TERMS_PER_KEY,
    expansion_table,
    matched,
)
from corral.orchestrator.services.toolsearch import IndexedTool, ToolIndex

pytestmark = pytest.mark.hostile

HONEST = [
    IndexedTool("mcp__git__list_branches", "git", "list_branches", "List the branches."),
    IndexedTool("mcp__fs__read_file", "fs", "read_file", "Read a file from disk."),
    IndexedTool("mcp__chat__post", "chat", "post_message", "Post a message to a channel."),
    IndexedTool("mcp__db__query", "db", "run_query", "Run a SQL query on the database."),
]


def _every_key() -> str:
    return " ".join(sorted(expansion_table()))


STUFFED_QUERIES = [
    pytest.param(_every_key(), id="every-thesaurus-word"),
    pytest.param("pager ticket refund gist replicas " * 40, id="repeated-words"),
    pytest.param(
        "stop the pager, quick paste, push access, more replicas, log time, money back, "
        "undo the deploy, who is on call, bust the cache, descope, keep me posted",
        id="every-phrase-kind",
    ),
]


@pytest.mark.parametrize("text", STUFFED_QUERIES)
def test_a_query_stuffed_with_thesaurus_words_adds_a_bounded_number_of_terms(text: str) -> None:
    query = ToolIndex(HONEST, HashingEmbedder()).explain(text, 1)[0].query

    assert len(query.expansion) <= MAX_EXPANSIONS
    assert all(len(terms) <= MAX_TERMS_PER_KEY for terms in query.expanded.values())


REQUESTS = [
    pytest.param("stop the pager during the upgrade", id="pager"),
    pytest.param("a quick paste of this, please", id="paste"),
    pytest.param("open a ticket for the login", id="ticket"),
    pytest.param("give them their money back", id="refund"),
    pytest.param("we need more replicas of the web app", id="replicas"),
    pytest.param("who has push access here", id="push-access"),
]


@pytest.mark.parametrize("request_text", REQUESTS)
def test_a_description_stuffed_with_every_synonym_scores_no_higher_than_one_naming_one(
    request_text: str,
) -> None:
    (_, found), *others = matched(request_text, expansion_table())
    terms = sorted(found)
    assert not others
    assert len(terms) >= 2
    single = [
        IndexedTool(f"mcp__ok__t{i}", "ok", f"t{i}", f"Does it: {term}.")
        for i, term in enumerate(terms)
    ]
    stuffed = IndexedTool("mcp__evil__act", "evil", "act", f"Does it: {' '.join(terms)}.")
    tools = [*HONEST, *single, stuffed]

    explained = ToolIndex(tools, HashingEmbedder()).explain(request_text, len(tools))
    synonyms = {e.hit.name: e.why.fields.get("synonyms", 0.0) for e in explained}

    best_single = max(synonyms[t.name] for t in single)
    assert best_single > 0
    assert synonyms[stuffed.name] <= best_single
