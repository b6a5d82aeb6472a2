"""A hybrid index: field-aware BM25 and embedding similarity over one list of documents, fused.

Tool search and skill matching differ only in their fields and weights (`Profile`); both rank
through this class, so a typo-tolerant query, the fusion and `--explain` work the same for
each. Building embeds every document (CPU work: async callers use a worker thread); a query
costs one short embedding, a few sparse BM25 lookups and a sort.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._embedding import DocumentEmbedder, Embedder, Vectors, VocabularySource
from ._analyzer import Speller, analyze
from ._fielded import FieldedBM25
from ._fusion import Fused, fuse
from ._synonyms import expansion_table, expansions

Ranker = Literal["fused", "bm25", "embedding"]
MAX_QUERY_CHARS = 2000
RANKERS: tuple[Ranker, ...] = ("fused", "bm25", "embedding")


@dataclass(frozen=True)
class Profile:
    """How one kind of document is ranked: BM25 weight per field, fusion weight per ranker."""

    field_weights: Mapping[str, float]
    ranker_weights: Mapping[str, float]
    depth: int
    # How much a synonym added by query expansion counts against a word the user typed.
    expansion_weight: float = 0.0


@dataclass(frozen=True)
class Query:
    """A query as the rankers see it: corrected words, their stems, and what was corrected."""

    text: str
    words: str
    tokens: tuple[str, ...]
    corrections: Mapping[str, str]
    expansion: tuple[str, ...] = ()


@dataclass(frozen=True)
class Explanation:
    """Why a document ranked: fused parts per ranker and BM25 parts per field."""

    fused: Fused
    fields: Mapping[str, float]
    similarity: float


class HybridIndex:
    """Fielded BM25 plus embeddings over fixed documents, searched many times."""

    def __init__(
        self,
        documents: Sequence[Mapping[str, str]],
        embedding_texts: Sequence[str],
        embedder: Embedder,
        profile: Profile,
    ) -> None:
        self.profile = profile
        self._size = len(documents)
        self._embedder = embedder
        self._bm25 = FieldedBM25(documents, profile.field_weights)
        self._synonyms = expansion_table()
        dictionary = embedder.vocabulary() if isinstance(embedder, VocabularySource) else ()
        self._speller = Speller((text for doc in documents for text in doc.values()), dictionary)
        self.vectors: Vectors = _document_vectors(embedder, embedding_texts)
        self._last_query: tuple[str, npt.NDArray[np.float32]] | None = None

    def __len__(self) -> int:
        return self._size

    def query(self, text: str) -> Query:
        # A query is a few words; past this, text (a model's or a caller's) only costs time.
        text = text[:MAX_QUERY_CHARS]
        words, corrections = self._speller.correct_text(text)
        tokens = tuple(analyze(words))
        extra: tuple[str, ...] = ()
        if self.profile.expansion_weight > 0:
            found = analyze(" ".join(expansions(words, self._synonyms)))
            extra = tuple(dict.fromkeys(t for t in found if t not in tokens))
        return Query(text, words, tokens, corrections, extra)

    def rank(self, query: Query, ranker: Ranker = "fused") -> list[tuple[int, float]]:
        """(document, score) pairs, best first; ties go to the earlier document."""
        if ranker == "bm25":
            return self._bm25_ranking(query)
        if ranker == "embedding":
            return _ranked(self._similarity(query))
        return [(f.doc, f.score) for f in self._fused(query)]

    def explain(self, query: Query, limit: int) -> list[Explanation]:
        """The fused top `limit`, each with its per-ranker and per-field parts (a synonym
        added by expansion counts under `synonyms`)."""
        fused = self._fused(query)[:limit]
        fields = self._bm25.field_scores(query.tokens)
        if query.expansion:
            weight = self.profile.expansion_weight
            fields["synonyms"] = weight * self._bm25.scores(query.expansion)
        similarity = self._similarity(query)
        return [
            Explanation(
                f,
                {name: float(part[f.doc]) for name, part in fields.items() if part[f.doc] > 0},
                float(similarity[f.doc]) if similarity.size else 0.0,
            )
            for f in fused
        ]

    def _fused(self, query: Query) -> list[Fused]:
        # Fusion reads only each ranking's first `depth`: ranking every document costs more
        # than the rest of a query over 1,000 tools.
        depth = self.profile.depth
        rankings = {
            "bm25": [doc for doc, _ in self._bm25_ranking(query, depth)],
            "embedding": [doc for doc, _ in _ranked(self._similarity(query), depth)],
        }
        return fuse(rankings, self.profile.ranker_weights, depth=depth)

    def _bm25_ranking(self, query: Query, limit: int | None = None) -> list[tuple[int, float]]:
        if not (query.tokens or query.expansion) or not self._size:
            return []
        scores = self._bm25.scores(query.tokens)
        if query.expansion:
            scores = scores + self.profile.expansion_weight * self._bm25.scores(query.expansion)
        return [(doc, score) for doc, score in _ranked(scores, limit) if score > 0.0]

    def _similarity(self, query: Query) -> npt.NDArray[np.float64]:
        if not self._size or not query.words:
            return np.zeros(0, dtype=np.float64)
        vector = self._query_vector(query.words)
        if not np.any(vector):
            return np.zeros(0, dtype=np.float64)
        return np.asarray(self.vectors @ vector, dtype=np.float64)

    def _query_vector(self, words: str) -> npt.NDArray[np.float32]:
        # `explain` ranks and then reads the cosines: one query, one embedding (a transformer
        # pass of milliseconds). A tuple is replaced whole, so threads never see half of one.
        last = self._last_query
        if last is not None and last[0] == words:
            return last[1]
        vector = np.asarray(self._embedder.embed([words])[0], dtype=np.float32)
        self._last_query = (words, vector)
        return vector


def _document_vectors(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    if isinstance(embedder, DocumentEmbedder):
        return embedder.embed_documents(list(texts))
    return embedder.embed(list(texts))


def _ranked(scores: npt.NDArray[np.float64], limit: int | None = None) -> list[tuple[int, float]]:
    """The first `limit` (else all) documents by descending score; ties in index order, as a
    stable sort of all of them would give."""
    candidates = np.arange(scores.size)
    if limit is not None and limit < scores.size:
        # Everything that scores at least the limit-th best, ties included, then sorted.
        cut = np.partition(scores, scores.size - limit)[scores.size - limit]
        candidates = np.flatnonzero(scores >= cut)
    order = candidates[np.argsort(-scores[candidates], kind="stable")][:limit]
    return [(int(doc), float(scores[doc])) for doc in order]
