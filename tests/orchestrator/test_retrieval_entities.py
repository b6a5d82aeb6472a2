"""A request that names a thing by its identifier is read as naming that kind of thing: the
shape of "API-88", "104.16.0.0/13" or "cus_9s8d7f" says Jira, an IP prefix or a Stripe
customer. A hostile request full of identifiers gains a bounded handful of words."""

from __future__ import annotations

import pytest

from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services.retrieval import HybridIndex, Profile
from corral.orchestrator.services.retrieval._entities import MAX_ENTITIES, entity_hints
from corral.orchestrator.services.retrieval._synonyms import MAX_EXPANSIONS


def kinds(text: str) -> dict[str, str]:
    return {token: " ".join(kind) for token, kind in entity_hints(text)}


@pytest.mark.parametrize(
    ("text", "token", "kind"),
    [
        ("API-88 -> done pls", "API-88", "jira"),
        ("log 3h on INFRA-77 for today", "INFRA-77", "jira"),
        ("refund ch_3Nabc123 in full", "ch_3Nabc123", "stripe charge payment"),
        ("is cus_9s8d7f6g still subscribed", "cus_9s8d7f6g", "stripe customer"),
        ("who originates 104.16.0.0/13", "104.16.0.0/13", "ip prefix"),
        ("lookups hitting 1.1.1.1", "1.1.1.1", "ip address"),
        ("route for 2001:db8::/32", "2001:db8::/32", "ip prefix"),
        ("peers of AS13335", "AS13335", "autonomous system asn"),
        ("open https://example.com/login", "https://example.com/login", "url web page"),
        ("invite jane@acme.io", "jane@acme.io", "email address"),
        ("stage src/parser.py", "src/parser.py", "file"),
        ("is shop.example.com.br up", "shop.example.com.br", "domain"),
        ("post it in #incidents", "#incidents", "slack channel"),
        ("what did #902 change", "#902", "github"),
        (
            'p99 of latency_seconds{job="api"} today',
            'latency_seconds{job="api"}',
            "prometheus metric query",
        ),
        ('{app="web"} |= "timeout" last hour', '{app="web"} |=', "loki log query"),
        ("select count(*) from auth.users today", "select count(*) from", "sql query table"),
        ("what broke in 4f2a9c1", "4f2a9c1", "commit"),
        ("notes for v2.4.1", "v2.4.1", "release version"),
        ("what time is it in America/Sao_Paulo", "America/Sao_Paulo", "time zone"),
    ],
)
def test_an_identifiers_shape_names_its_kind(text: str, token: str, kind: str) -> None:
    assert kinds(text).get(token) == kind


@pytest.mark.parametrize(
    "text",
    [
        "convert the file to UTF-8",
        "hash it with SHA-256",
        "dates in ISO-8601",
        "the standup at 10:30:00",
        "read/write access for ci/cd",
        "merge the pull request",
        "version 2 of the api",
        "in_progress tickets",
        "a stripe-like my_var name",
    ],
)
def test_words_that_only_look_like_identifiers_name_nothing(text: str) -> None:
    assert kinds(text) == {}


def test_each_kind_counts_once_and_a_request_at_most_a_handful() -> None:
    request = " ".join(f"KEY-{n} cus_abcd{n} 10.0.0.{n} AS{n} #{n}" for n in range(200))
    hints = entity_hints(request)
    assert len(hints) <= MAX_ENTITIES
    assert len({kind for _, kind in hints}) == len(hints)


@pytest.mark.parametrize(
    "text",
    ["a/" * 1000, "select " * 300, "x{" + '="' * 600, "a." * 1000, "1:" * 1000, ":" * 2000],
)
def test_a_hostile_request_is_read_without_backtracking_forever(text: str) -> None:
    assert len(entity_hints(text[:2000])) <= MAX_ENTITIES


def _index(expansion_weight: float) -> HybridIndex:
    documents = [
        {"name": "jira transition issue", "description": "Move a Jira issue to another status"},
        {"name": "github merge pull request", "description": "Merge a pull request"},
    ]
    profile = Profile(
        field_weights={"name": 1.0, "description": 1.0},
        ranker_weights={"bm25": 1.0, "embedding": 1.0},
        depth=10,
        expansion_weight=expansion_weight,
    )
    return HybridIndex(documents, [d["description"] for d in documents], HashingEmbedder(), profile)


def test_the_kind_is_searched_for_and_embedded_with_the_request() -> None:
    query = _index(1.0).query("API-88 -> done pls")
    assert query.entities == {"API-88": ("jira",)}
    assert "jira" in query.expansion
    assert query.embedded.endswith("jira")
    assert _index(1.0).rank(query)[0][0] == 0


def test_without_expansion_the_kind_is_still_embedded_but_not_searched_for() -> None:
    query = _index(0.0).query("API-88 -> done pls")
    assert query.expansion == ()
    assert query.embedded.endswith("jira")


def test_a_request_full_of_identifiers_and_synonyms_stays_within_the_expansion_budget() -> None:
    request = "delete the ticket file " + " ".join(
        f"PRJ-{n} https://h{n}.example.com 10.1.{n}.0/24 AS{n}" for n in range(100)
    )
    query = _index(1.0).query(request)
    assert len(query.expansion) <= MAX_EXPANSIONS
    assert len(query.entities) <= MAX_ENTITIES
