"""Ranks skills against a task: typo-tolerant fielded BM25 over names, descriptions and the
SKILL.md prose, fused with embedding similarity and rescored by the evidence of both
(`retrieval.HybridIndex`).

Each signal misses what the other catches: BM25 rewards the exact words a skill uses ("Terraform",
"CodeQL"), the embedding finds a skill described in other words. Building a matcher embeds every
skill, and matching embeds the query: from async code, run both through `anyio.to_thread`. The
weights were chosen on the tuning part of `benchmarks/data/retrieval` (docs/retrieval.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from corral.orchestrator.services._embedding import Embedder

from ..retrieval import (
    Explanation,
    HybridIndex,
    Profile,
    Query,
    Ranker,
    Rerank,
    split_identifier,
)
from ._listing import render_listing
from ._model import Skill, SkillCatalog
from ._prose import skill_prose

MatchMethod = Ranker
DEFAULT_LIMIT = 5
SKILL_PROFILE = Profile(
    # The body's prose (`skill_prose`) at a quarter: it names a field's own terms that the
    # description leaves out, but it is long and says much besides. On the tuning part 0.1,
    # 0.25 and 0.5 gained 2.2, 2.6 and 2.6 points of top-1; 0.25 gained most at top-3.
    field_weights={"name": 1.0, "description": 1.0, "body": 0.25},
    # As for tools: 1.2 to 1.5 were best on the tuning part, 2 and more lost top-3 hits.
    ranker_weights={"bm25": 1.0, "embedding": 1.5},
    depth=50,
    # Skill descriptions are long and say the same thing several ways: a synonym helps less
    # than for terse tool descriptions, and at full weight it pulled in wrong skills.
    expansion_weight=0.3,
    # The fused head is rescored by a linear model of the evidence (`retrieval._rerank`),
    # fitted listwise on tune requests whose vectors came from a query adapter that had not
    # read them: all 885 with none, and round 13's 183 with round 12's (docs/retrieval.md).
    rerank=Rerank(
        {
            "cosine": 13.6,
            "bm25": 6.9,
            "bm25:name": -3.64,
            "bm25:description": -0.46,
            "bm25:body": 2.61,
            "matched:name": 2.0,
            "matched:description": -0.73,
            "matched:body": -0.54,
            "synonyms": -1.03,
        }
    ),
)


@dataclass(frozen=True)
class Match:
    """A skill and how well it fits: the second stage's score over the fused head (`fused`),
    or the one signal's raw score (`bm25`, `embedding`)."""

    skill: Skill
    score: float


@dataclass(frozen=True)
class MatchExplanation:
    """Why a skill ranked where it did: the query as the rankers saw it and each part."""

    match: Match
    query: Query
    why: Explanation


class SkillMatcher:
    """An index of a catalog's skills, queried with task texts."""

    def __init__(self, catalog: SkillCatalog | Iterable[Skill], embedder: Embedder) -> None:
        self.skills: tuple[Skill, ...] = tuple(catalog)
        self._index = HybridIndex(
            [_fields(skill) for skill in self.skills],
            [_document(skill) for skill in self.skills],
            embedder,
            SKILL_PROFILE,
        )

    def match(
        self, text: str, limit: int = DEFAULT_LIMIT, *, method: MatchMethod = "fused"
    ) -> list[Match]:
        """The `limit` skills that fit `text` best, best first; none for blank text."""
        if not text.strip() or not self.skills or limit < 1:
            return []
        ranked = self._index.rank(self._index.query(text), method)
        return [Match(self.skills[i], score) for i, score in ranked[:limit]]

    def explain(self, text: str, limit: int = DEFAULT_LIMIT) -> list[MatchExplanation]:
        """The fused best `limit`, each with its per-ranker and per-field score parts."""
        if not text.strip() or not self.skills or limit < 1:
            return []
        query = self._index.query(text)
        return [
            MatchExplanation(Match(self.skills[why.fused.doc], why.fused.score), query, why)
            for why in self._index.explain(query, limit)
        ]

    def listing(self, text: str, budget_tokens: int) -> str:
        """The skills that fit `text`, best first, as instructions within `budget_tokens`.

        Blank text lists the skills in catalog order. The ranking reaches only the skills
        that one ranker put in its first 50 (the fused head); the others follow in catalog
        order, so a budget that holds them all lists them all, and the count of those left
        out is every skill that did not fit. Empty when there are no skills or the budget
        cannot hold even one.
        """
        ranked = [m.skill for m in self.match(text, len(self.skills))]
        placed = {id(skill) for skill in ranked}
        rest = [skill for skill in self.skills if id(skill) not in placed]
        return render_listing([*ranked, *rest], budget_tokens)


def _fields(skill: Skill) -> dict[str, str]:
    return {
        "name": " ".join(split_identifier(skill.name)),
        "description": skill.description,
        "body": skill_prose(skill.content),
    }


def _document(skill: Skill) -> str:
    """What a skill is embedded as: its name as words, then its description."""
    return f"{' '.join(split_identifier(skill.name))}: {skill.description}"
