"""The retrieval core shared by tool search and skill matching: spelling correction, synonym
expansion, weighted fusion, the explanation parts and the on-disk vector cache."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from corral.orchestrator.services import HashingEmbedder, VectorCache, Vectors, WordLlamaEmbedder
from corral.orchestrator.services.retrieval import Speller, fuse
from corral.orchestrator.services.retrieval._hybrid import _ranked
from corral.orchestrator.services.retrieval._synonyms import expansion_table, expansions
from corral.orchestrator.services.toolsearch import IndexedTool, ToolIndex

DOCS = [
    "create pull request branch",
    "update branch of a pull request",
    "list repository branches",
    "jira issue transition",
    "open the page in the browser",
]


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("brnach", "branch"), ("opne", "open"), ("jria", "jira"), ("reqest", "request")],
)
def test_a_word_one_edit_from_the_vocabulary_is_corrected_to_it(typed: str, meant: str) -> None:
    assert Speller(DOCS).correct(typed) == meant


@pytest.mark.parametrize(
    "word",
    [
        "branch",  # known
        "pul",  # too short to guess
        "grep",  # one edit from "repo"-like words only by changing the first letter
        "ranch",  # a real word the dictionary knows
        "cash",  # a one-letter substitution in a short word is not trusted
    ],
)
def test_known_short_real_or_doubtful_words_are_left_alone(word: str) -> None:
    speller = Speller([*DOCS, "repo case"], dictionary=frozenset({"ranch"}))

    assert speller.correct(word) == word


def test_correcting_text_keeps_its_other_words_and_reports_each_change() -> None:
    text, changed = Speller(DOCS).correct_text("Opne the PR for my brnach")

    assert text == "open the PR for my branch"
    assert changed == {"opne": "open", "brnach": "branch"}


def test_a_synonym_phrase_expands_both_ways_and_function_words_never_do() -> None:
    table = expansion_table()

    assert {"pull request", "merge request"} <= set(expansions("open a PR", table))
    assert "pr" in expansions("review this pull request", table)
    assert "issue" in expansions("close the ticket", table)
    assert expansions("as it is", table) == []


def test_fusion_weighs_each_ranker_and_cuts_each_list_at_its_depth() -> None:
    fused = fuse({"a": [0, 1, 2], "b": [2, 0]}, {"a": 1.0, "b": 2.0}, depth=2, k=10)

    scores = {f.doc: f.score for f in fused}
    assert scores == pytest.approx({0: 1 / 11 + 2 / 12, 1: 1 / 12, 2: 2 / 11})
    assert [f.doc for f in fused] == [0, 2, 1]
    assert fused[0].ranks == {"a": 1, "b": 2}


TOOLS = [
    IndexedTool("mcp__gh__create_pull_request", "gh", "create_pull_request", "Open a new PR."),
    IndexedTool("mcp__gh__merge_pull_request", "gh", "merge_pull_request", "Merge a PR."),
    IndexedTool("mcp__chat__post_message", "chat", "post_message", "Post to a channel.", {}),
    IndexedTool("mcp__jira__transition", "jira", "transition", "Move a Jira issue to a status."),
]


def test_a_misspelled_query_finds_the_tool_it_means() -> None:
    index = ToolIndex(TOOLS, HashingEmbedder())

    hits = index.search("crete a pul requst", 1, ranker="bm25")

    assert hits[0].name == "mcp__gh__create_pull_request"


def test_an_explanation_splits_the_tool_score_into_features_rankers_and_fields() -> None:
    index = ToolIndex(TOOLS, HashingEmbedder())

    top = index.explain("merge the pull request", 2)[0]

    assert top.hit.name == "mcp__gh__merge_pull_request"
    assert sum(top.why.rerank.values()) == pytest.approx(top.hit.score, abs=1e-5)
    assert {"cosine", "cosine:name", "cosine:parameters", "bm25"} <= top.why.rerank.keys()
    assert top.why.fused.ranks["bm25"] == 1
    assert {"name", "description"} <= top.why.fields.keys()
    assert top.why.fields["name"] > 0


class CountingEmbedder:
    """The hashing twin, counting how many texts it was asked to embed."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded += len(texts)
        return self.inner.embed(texts)


def test_cached_vectors_are_read_back_instead_of_embedded_again(tmp_path: Path) -> None:
    cache, embedder = VectorCache(tmp_path), CountingEmbedder()
    texts = ["create a pull request", "post a message"]

    first = cache.vectors("model-1", texts, embedder.embed)
    second = cache.vectors("model-1", texts, embedder.embed)

    assert embedder.embedded == 2
    assert np.array_equal(first, second)


def test_a_changed_tool_text_or_model_misses_the_cache(tmp_path: Path) -> None:
    cache, embedder = VectorCache(tmp_path), CountingEmbedder()
    cache.vectors("model-1", ["create a pull request"], embedder.embed)

    cache.vectors("model-1", ["create a pull request, now as a draft"], embedder.embed)
    cache.vectors("model-2", ["create a pull request"], embedder.embed)

    assert embedder.embedded == 3
    assert len(list(tmp_path.glob("*.npy"))) == 3


def test_a_changed_tool_list_embeds_only_the_texts_no_cached_file_holds(tmp_path: Path) -> None:
    cache, embedder = VectorCache(tmp_path), CountingEmbedder()
    before = ["create a pull request", "post a message", "list pods"]
    cache.vectors("model-1", before, embedder.embed)

    texts = ["create a pull request", "post a message to a channel", "list pods", "get the time"]
    vectors = cache.vectors("model-1", texts, embedder.embed)

    assert embedder.embedded == 3 + 2
    assert np.array_equal(vectors, HashingEmbedder().embed(texts))


def test_another_models_vectors_are_never_reused_for_a_text(tmp_path: Path) -> None:
    cache, embedder = VectorCache(tmp_path), CountingEmbedder()
    cache.vectors("model-1", ["create a pull request"], embedder.embed)

    cache.vectors("model-2", ["create a pull request", "post a message"], embedder.embed)

    assert embedder.embedded == 1 + 2


def test_a_keys_file_that_does_not_fit_its_vectors_is_not_trusted(tmp_path: Path) -> None:
    cache, embedder = VectorCache(tmp_path), CountingEmbedder()
    cache.vectors("model-1", ["create a pull request", "post a message"], embedder.embed)
    (keys,) = tmp_path.glob("*.keys")
    np.save(keys, np.zeros((5, 32), dtype=np.uint8))
    keys.with_suffix(".keys.npy").replace(keys)

    cache.vectors("model-1", ["create a pull request", "list pods"], embedder.embed)

    assert embedder.embedded == 2 + 2


def test_a_damaged_cache_file_is_embedded_again_and_rewritten(tmp_path: Path) -> None:
    cache, embedder = VectorCache(tmp_path), CountingEmbedder()
    cache.vectors("m", ["a text"], embedder.embed)
    (stored,) = tmp_path.glob("*.npy")
    stored.write_bytes(b"not a numpy file")

    again = cache.vectors("m", ["a text"], embedder.embed)

    assert embedder.embedded == 2
    assert again.shape == (1, 128)
    assert np.array_equal(np.load(stored), again)


def test_the_cache_keeps_only_its_most_recent_files(tmp_path: Path) -> None:
    cache, embedder = VectorCache(tmp_path, keep=2), CountingEmbedder()

    for n in range(4):
        cache.vectors("m", [f"text {n}"], embedder.embed)

    assert len(list(tmp_path.glob("*.npy"))) == 2


def test_a_tool_index_reuses_cached_vectors_until_a_tool_changes(tmp_path: Path) -> None:
    embedder = WordLlamaEmbedder(cache=VectorCache(tmp_path))
    ToolIndex(TOOLS, embedder)
    ToolIndex(TOOLS, embedder)
    # One file per embedded text of a tool: the main text, its name, its parameters.
    assert len(list(tmp_path.glob("*.npy"))) == 3

    reworded = IndexedTool("mcp__jira__transition", "jira", "transition", "Set an issue's status.")
    ToolIndex([*TOOLS[:3], reworded], embedder)

    # Only the main text holds the description: one new file.
    assert len(list(tmp_path.glob("*.npy"))) == 4


def test_explaining_a_query_embeds_it_once() -> None:
    embedder = CountingEmbedder()
    index = ToolIndex(TOOLS, embedder)
    built = embedder.embedded

    index.explain("merge the pull request", 3)

    assert embedder.embedded == built + 1


@pytest.mark.parametrize("limit", [1, 5, 50, 999, 1000, 2000])
def test_the_head_of_a_ranking_is_the_head_of_the_full_stable_ranking(limit: int) -> None:
    # Few distinct scores, so ties straddle every cut: they must still go to the earlier doc.
    scores = np.random.default_rng(7).integers(0, 20, 1000).astype(np.float64)
    assert _ranked(scores, limit) == _ranked(scores)[:limit]
