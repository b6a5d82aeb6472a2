"""The tool index: ranking on the real MCP catalogs with WordLlama, fusion and ties with the
hashing twin, bad queries, catalog files and exposed names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.orchestrator.services import HashingEmbedder, WordLlamaEmbedder
from corral.orchestrator.services.toolsearch import (
    EMPTY_QUERY_MESSAGE,
    CatalogInvalid,
    EmptyQuery,
    IndexedTool,
    ToolIndex,
    exposed_tool_name,
    load_catalog,
)
from corral.orchestrator.services.toolsearch._index import TOOL_PROFILE
from corral.tools import InvalidInput

from .._shared import shared_data


def shared_tools() -> Path:
    return shared_data("tools")


@pytest.fixture(scope="module")
def real_index() -> ToolIndex:
    return ToolIndex(load_catalog(shared_tools()), WordLlamaEmbedder())


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("create a pull request on github", "mcp__github__create_pull_request"),
        ("take a screenshot of the page", "mcp__playwright__browser_take_screenshot"),
        ("what time is it in Tokyo right now", "mcp__time__get_current_time"),
        ("refund a customer's payment", "mcp__stripe__create_refund"),
    ],
)
def test_a_plain_request_finds_its_real_tool_in_the_top_five(
    real_index: ToolIndex, query: str, expected: str
) -> None:
    names = [hit.name for hit in real_index.search(query, 5)]

    assert expected in names


def test_hits_carry_server_and_raw_name_best_first(real_index: ToolIndex) -> None:
    hits = real_index.search("take a screenshot of the page", 8)

    assert hits[0].name == "mcp__playwright__browser_take_screenshot"
    assert (hits[0].server, hits[0].tool) == ("playwright", "browser_take_screenshot")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(hits) == 8


TOOLS = [
    IndexedTool("mcp__chat__post", "chat", "post", "Post a message to a channel", {"channel": ""}),
    IndexedTool("mcp__chat__react", "chat", "react", "Add an emoji reaction to a message"),
    IndexedTool("mcp__files__write", "files", "write", "Write text to a file on disk"),
    IndexedTool("mcp__files__copy", "files", "copy", "Write text to a file on disk"),
    IndexedTool("mcp__clock__now", "clock", "now", "Current time in a timezone"),
]


def test_the_first_stage_is_a_weighted_reciprocal_rank_sum_of_bm25_and_embedding_ranks() -> None:
    index = ToolIndex(TOOLS, HashingEmbedder())
    query = "post a reaction message"
    weights = TOOL_PROFILE.ranker_weights

    ranks = {
        ranker: {h.name: rank for rank, h in enumerate(index.search(query, 50, ranker=ranker), 1)}
        for ranker in ("bm25", "embedding")
    }
    fused = index.explain(query, 50)

    expected = {
        name: sum(weights[k] / (60 + r[name]) for k, r in ranks.items() if name in r)
        for name in ranks["bm25"].keys() | ranks["embedding"].keys()
    }
    # The second stage rescores exactly the first stage's documents; each keeps its shares.
    first = {why.hit.name: sum(why.why.fused.parts.values()) for why in fused}
    assert first == pytest.approx(expected, abs=1e-6)
    assert fused[0].hit.name in {"mcp__chat__post", "mcp__chat__react"}


def test_tools_with_the_same_text_rank_in_index_order_for_every_ranker() -> None:
    index = ToolIndex(TOOLS, HashingEmbedder())

    for ranker in ("fused", "bm25", "embedding"):
        names = [h.name for h in index.search("write text to a file", 2, ranker=ranker)]
        assert names == ["mcp__files__write", "mcp__files__copy"], ranker


def test_a_blank_query_or_a_zero_limit_is_refused_with_a_clear_message() -> None:
    index = ToolIndex(TOOLS, HashingEmbedder())

    with pytest.raises(EmptyQuery, match=EMPTY_QUERY_MESSAGE):
        index.search("   ")
    with pytest.raises(InvalidInput, match="limit must be at least 1"):
        index.search("post", 0)


def test_an_empty_index_finds_nothing() -> None:
    assert ToolIndex([], HashingEmbedder()).search("anything") == []


def test_a_malformed_catalog_file_is_named_in_the_error(tmp_path: Path) -> None:
    (tmp_path / "good.json").write_text(json.dumps([{"server": "s", "name": "t"}]))
    (tmp_path / "bad.json").write_text(json.dumps([{"server": "s", "description": "no name"}]))

    with pytest.raises(CatalogInvalid, match=r"bad\.json: tool 1: name: Field required"):
        load_catalog(tmp_path)


def test_exposed_names_are_safe_unique_and_at_most_64_bytes() -> None:
    first = exposed_tool_name("my-server", "API-post-search")
    clash = exposed_tool_name("my_server", "API_post_search", taken=[first])
    long = exposed_tool_name("analytics", "x" * 80)

    assert first == "mcp__my_server__API_post_search"
    assert clash != first and clash.startswith("mcp__my_server__API_post_search_")
    assert len(long.encode()) == 64 and long.startswith("mcp__analytics__xxx")
