"""The second stage of the fused ranking: a weighted sum of features over the fused head, with
other texts of each document (views) and each group's mean vector as evidence."""

from __future__ import annotations

import numpy as np
import pytest

from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services.retrieval import Fused, HybridIndex, Profile, Rerank
from corral.orchestrator.services.retrieval._actions import action_kinds
from corral.orchestrator.services.retrieval._rerank import group_centroids, normalized, rescore

DOCS = [
    {"name": "create issue", "server": "jira", "description": "Create a new issue."},
    {"name": "create issue", "server": "github", "description": "Create a new issue."},
    {"name": "list commits", "server": "github", "description": "List the commits of a branch."},
]
TEXTS = [f"{d['server']} {d['name']}: {d['description']}" for d in DOCS]


def profile(weights: dict[str, float]) -> Profile:
    return Profile(
        field_weights={"name": 1.0, "server": 1.0, "description": 1.0},
        ranker_weights={"bm25": 1.0, "embedding": 1.5},
        depth=50,
        rerank=Rerank(weights),
        group_field="server",
    )


def test_the_second_stage_orders_the_fused_head_by_its_weighted_features() -> None:
    head = [Fused(0, 0.03), Fused(1, 0.02), Fused(2, 0.01)]
    features = {"cosine": np.array([0.1, 0.9, 0.5]), "bm25": np.array([1.0, 0.0, 0.0])}

    ranked = rescore(head, features, Rerank({"cosine": 2.0, "bm25": 0.5}))

    assert [f.doc for f in ranked] == [1, 2, 0]
    assert ranked[0].score == pytest.approx(1.8)


def test_a_query_naming_a_server_lifts_that_servers_tool_above_its_twin() -> None:
    index = HybridIndex(DOCS, TEXTS, HashingEmbedder(), profile({"matched:server": 1.0}))

    ranked = index.rank(index.query("create an issue in jira"))

    assert ranked[0][0] == 0
    assert ranked[0][1] > ranked[1][1]


def test_a_view_is_embedded_only_when_its_cosine_is_weighed() -> None:
    views = {"name": [d["name"] for d in DOCS], "unused": [d["description"] for d in DOCS]}

    index = HybridIndex(DOCS, TEXTS, HashingEmbedder(), profile({"cosine:name": 1.0}), views)
    why = index.explain(index.query("list commits"), 1)[0]

    assert why.fused.doc == 2
    assert set(why.rerank) == {"cosine:name"}
    assert why.rerank["cosine:name"] == pytest.approx(why.fused.score)


def test_each_document_gets_the_unit_mean_vector_of_its_group() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)

    centroids = group_centroids(vectors, ["a", "b", "a"])

    assert np.allclose(centroids, [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])


def test_bm25_features_are_scaled_by_the_best_score_of_the_query() -> None:
    assert np.allclose(normalized(np.array([2.0, 1.0, 0.0])), [1.0, 0.5, 0.0])
    assert np.allclose(normalized(np.zeros(3)), np.zeros(3))


def test_the_heads_bm25_features_are_scaled_by_the_best_score_over_every_document() -> None:
    scores = np.array([4.0, 1.0, 2.0, 0.0])

    assert np.allclose(normalized(scores, np.array([2, 1])), [0.5, 0.25])
    assert np.allclose(normalized(np.zeros(4), np.array([3])), [0.0])


def test_each_explained_documents_feature_parts_add_up_to_its_own_score() -> None:
    weights = {"cosine": 1.0, "bm25": 0.5, "matched:server": 0.7, "cosine:server": 0.3}
    index = HybridIndex(DOCS, TEXTS, HashingEmbedder(), profile(weights))

    query = index.query("create an issue in github")
    explained = index.explain(query, 3)

    assert [why.fused.doc for why in explained] == [doc for doc, _ in index.rank(query)]
    for why in explained:
        assert sum(why.rerank.values()) == pytest.approx(why.fused.score)


def test_without_a_second_stage_the_score_is_the_rank_fusion() -> None:
    plain = Profile({"name": 1.0}, {"bm25": 1.0, "embedding": 1.5}, depth=50)
    index = HybridIndex(DOCS, TEXTS, HashingEmbedder(), plain)

    why = index.explain(index.query("list commits"), 1)[0]

    assert why.rerank == {}
    assert sum(why.fused.parts.values()) == pytest.approx(why.fused.score)


def test_a_servers_mean_vector_moves_only_with_its_own_tools() -> None:
    weights = {"cosine:server": 1.0}
    index = HybridIndex(DOCS, TEXTS, HashingEmbedder(), profile(weights))
    stuffed = [*DOCS, *({**DOCS[1], "name": f"tool {i}"} for i in range(20))]
    texts = [*TEXTS, *(f"github tool {i}: anything and everything" for i in range(20))]
    crowded = HybridIndex(stuffed, texts, HashingEmbedder(), profile(weights))

    alone = index.explain(index.query("create an issue in jira"), 3)
    beside = crowded.explain(crowded.query("create an issue in jira"), 30)

    jira = next(w.rerank["cosine:server"] for w in alone if w.fused.doc == 0)
    assert next(w.rerank["cosine:server"] for w in beside if w.fused.doc == 0) == jira


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("get_datasource", {"read"}),
        ("update_datasource", {"update"}),
        ("list_pull_requests", {"list"}),
        ("jira_remove_watcher", {"delete"}),
        ("point the datasource at a new url", {"update", "create"}),
        ("stop notifying bob about the ticket", {"delete"}),
        ("the datasource", set()),
    ],
)
def test_a_request_and_a_tool_name_are_read_for_their_kind_of_action(
    text: str, kinds: set[str]
) -> None:
    assert action_kinds(text) == kinds


ACTION_DOCS = [
    {"name": "get datasource", "description": "Datasource of the given uid."},
    {"name": "update datasource", "description": "Datasource of the given uid."},
    {"name": "delete datasource", "description": "Datasource of the given uid."},
]


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("change the datasource", "update datasource"),
        ("drop the datasource", "delete datasource"),
        ("show me the datasource", "get datasource"),
    ],
)
def test_near_duplicates_are_told_apart_by_the_kind_of_action_asked_for(
    request_text: str, expected: str
) -> None:
    texts = [d["name"] + ": " + d["description"] for d in ACTION_DOCS]
    weights = {"matched:action": 1.0}
    action = Profile(
        field_weights={"description": 1.0},
        ranker_weights={"bm25": 1.0},
        depth=50,
        rerank=Rerank(weights),
        action_field="name",
    )
    index = HybridIndex(ACTION_DOCS, texts, HashingEmbedder(), action)

    top = index.explain(index.query(request_text), 1)[0]

    assert ACTION_DOCS[top.fused.doc]["name"] == expected
    assert top.rerank == {"matched:action": 1.0}
