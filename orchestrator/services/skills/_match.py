"""Ranks skills against a task: BM25 over names and descriptions, fused with embeddings.

Each signal misses what the other catches: BM25 rewards the exact words a skill uses ("Terraform",
"CodeQL"), the embedding finds a skill described in other words. Reciprocal rank fusion joins
the two rankings without tuning their scales against each other. Building a matcher embeds every
skill, and matching embeds the query: from async code, run both through `anyio.to_thread`.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import bm25s
import numpy as np
import numpy.typing as npt
import Stemmer  # type: ignore[import-not-found]  # a C extension without stubs
from bm25s.stopwords import STOPWORDS_EN

from corral.orchestrator.services._embedding import Embedder, Vectors, reciprocal_rank_fusion

from ._listing import render_listing
from ._model import Skill, SkillCatalog

MatchMethod = Literal["fused", "bm25", "embedding"]
DEFAULT_LIMIT = 5

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(STOPWORDS_EN)
# bm25s sets its own logger to DEBUG, and WordLlama's import configures the root logger, so
# without this every index build would print a debug line on stderr.
logging.getLogger("bm25s").setLevel(logging.WARNING)
# A PyStemmer object must not be shared between threads, and matching runs in worker threads.
_local = threading.local()


@dataclass(frozen=True)
class Match:
    """A skill and how well it fits: a fused rank score, or the one signal's raw score."""

    skill: Skill
    score: float


class SkillMatcher:
    """An index of a catalog's skills, queried with task texts."""

    def __init__(self, catalog: SkillCatalog | Iterable[Skill], embedder: Embedder) -> None:
        self.skills: tuple[Skill, ...] = tuple(catalog)
        self._embedder = embedder
        documents = [_document(skill) for skill in self.skills]
        self._bm25 = bm25s.BM25()
        if documents:
            self._bm25.index([_tokens(doc) for doc in documents], show_progress=False)
        self._vectors: Vectors = embedder.embed(documents)

    def match(
        self, text: str, limit: int = DEFAULT_LIMIT, *, method: MatchMethod = "fused"
    ) -> list[Match]:
        """The `limit` skills that fit `text` best, best first; none for blank text."""
        if not text.strip() or not self.skills or limit < 1:
            return []
        if method == "bm25":
            ranked = self._bm25_ranking(text)
        elif method == "embedding":
            ranked = self._embedding_ranking(text)
        else:
            rankings = [self._bm25_ranking(text), self._embedding_ranking(text)]
            ranked = reciprocal_rank_fusion([[doc for doc, _ in r] for r in rankings])
        return [Match(self.skills[i], score) for i, score in ranked[:limit]]

    def listing(self, text: str, budget_tokens: int) -> str:
        """The skills that fit `text`, best first, as instructions within `budget_tokens`.

        Blank text lists the skills in catalog order. Empty when there are no skills or the
        budget cannot hold even one.
        """
        ranked = [m.skill for m in self.match(text, len(self.skills))] or list(self.skills)
        return render_listing(ranked, budget_tokens)

    def _bm25_ranking(self, text: str) -> list[tuple[int, float]]:
        query = _tokens(text)
        if not query:
            return []
        scores = self._bm25.get_scores(query)
        return _best_first(scores, keep=scores > 0)

    def _embedding_ranking(self, text: str) -> list[tuple[int, float]]:
        similarity = self._vectors @ self._embedder.embed([text])[0]
        return _best_first(similarity)


def _best_first(
    scores: npt.NDArray[Any], keep: npt.NDArray[np.bool_] | None = None
) -> list[tuple[int, float]]:
    """(index, score) pairs, only where `keep` is set, highest first; ties in catalog order."""
    values = scores.astype(np.float64)
    order = np.lexsort((np.arange(len(values)), -values))
    return [(int(i), float(values[i])) for i in order if keep is None or keep[i]]


def _document(skill: Skill) -> str:
    """What a skill is matched on: its name as words, then its description."""
    return f"{' '.join(_WORD.findall(skill.name.lower()))}: {skill.description}"


def _tokens(text: str) -> list[str]:
    """Lower-case words less stop words, stemmed so that "tests" finds "testing"."""
    words = [word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS]
    return list(_stemmer().stemWords(words))


def _stemmer() -> Any:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer
