"""A hybrid index: field-aware BM25 and embedding similarity over one list of documents, fused.

Tool search and skill matching differ only in their fields and weights (`Profile`); both rank
through this class, so a typo-tolerant query, the fusion and `--explain` work the same for
each. Building embeds every document (CPU work: async callers use a worker thread); a query
costs one short embedding, a few sparse BM25 lookups and a sort.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._embedding import DocumentEmbedder, Embedder, QueryEmbedder, Vectors, VocabularySource
from ._actions import ACTION_KINDS, MAX_KINDS, action_kinds
from ._analyzer import Speller, analyze
from ._entities import entity_hints
from ._fielded import FieldedBM25
from ._fusion import Fused, fuse
from ._lexicon import translate
from ._rerank import Rerank, Scores, contributions, group_centroids, normalized, rescore
from ._synonyms import MAX_EXPANSIONS, expansion_table, matched, thesaurus_words

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
    # The second stage over the fused head (`_rerank`); None ranks by the fusion alone.
    rerank: Rerank | None = None
    # The field whose value groups documents (a tool's server), for `cosine:<field>`.
    group_field: str = ""
    # The field whose verbs say what a document does (a tool's name), for `matched:action`.
    action_field: str = ""


@dataclass(frozen=True)
class Query:
    """A query as the rankers see it: corrected words, their stems, and what was corrected."""

    text: str
    words: str
    tokens: tuple[str, ...]
    corrections: Mapping[str, str]
    expansion: tuple[str, ...] = ()
    # Foreign words read in English (`_lexicon`), before spelling: word -> gloss.
    translations: Mapping[str, str] = field(default_factory=dict)
    # Each word or phrase of the query that the thesaurus knows, and the terms it added.
    expanded: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The stems of each term that each of those added (`expansion` is their union): a
    # document earns a group's credit once, by its best term, however many it holds.
    expansion_groups: tuple[tuple[tuple[str, ...], ...], ...] = ()
    # Identifiers whose shape names their kind (`_entities`): identifier -> the kind's words.
    entities: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def embedded(self) -> str:
        """What the embedding model reads: the words, then the kinds of the identifiers
        named, where the model reads an identifier's kind best."""
        kinds = " ".join(word for kind in self.entities.values() for word in kind)
        return f"{self.words} {kinds}" if kinds else self.words


@dataclass(frozen=True)
class Explanation:
    """Why a document ranked: fused parts per ranker, BM25 parts per field, and each
    feature's part of the second stage's score (empty where the profile has none)."""

    fused: Fused
    fields: Mapping[str, float]
    similarity: float
    rerank: Mapping[str, float] = field(default_factory=dict)
    # What embedded the request (`HybridIndex.query_model`).
    embedding: str = ""


class HybridIndex:
    """Fielded BM25 plus embeddings over fixed documents, searched many times."""

    def __init__(
        self,
        documents: Sequence[Mapping[str, str]],
        embedding_texts: Sequence[str],
        embedder: Embedder,
        profile: Profile,
        views: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """`views` are other texts of each document (name: one text per document), embedded
        only where the profile's second stage weighs their `cosine:<name>`."""
        self.profile = profile
        self._size = len(documents)
        self._embedder = embedder
        self._bm25 = FieldedBM25(documents, profile.field_weights)
        self._synonyms = expansion_table()
        vocabulary = embedder.vocabulary() if isinstance(embedder, VocabularySource) else ()
        known = _KnownWords(vocabulary, thesaurus_words())
        self._speller = Speller((text for doc in documents for text in doc.values()), known)
        self.vectors: Vectors = _document_vectors(embedder, embedding_texts)
        rerank = profile.rerank
        self._views: dict[str, Vectors] = {
            name: _document_vectors(embedder, texts)
            for name, texts in (views or {}).items()
            if rerank is not None and rerank.wants(f"cosine:{name}")
        }
        group = profile.group_field
        if group and rerank is not None and rerank.wants(f"cosine:{group}") and self._size:
            groups = [doc.get(group, "") for doc in documents]
            self._views[group] = group_centroids(self.vectors, groups).astype(np.float32)
        self._actions = _action_matrix(documents, profile)
        self._last_query: tuple[str, npt.NDArray[np.float32]] | None = None

    def __len__(self) -> int:
        return self._size

    def query(self, text: str) -> Query:
        # A query is a few words; past this, text (a model's or a caller's) only costs time.
        text = text[:MAX_QUERY_CHARS]
        # The index and the model are English: a Spanish or German request is glossed first,
        # so the speller never "corrects" a foreign word into an unrelated English one.
        english = translate(text)
        words, corrections = self._speller.correct_text(english.text)
        tokens = tuple(analyze(words))
        keys: dict[str, tuple[str, ...]] = {}
        if self.profile.expansion_weight > 0:
            keys = dict(matched(words, self._synonyms))
        # An identifier's kind ("API-88" is Jira's) is searched for as a synonym is, and
        # embedded with the request's words (`Query.embedded`).
        entities = dict(entity_hints(text))
        added = [*entities.values(), *keys.values()] if self.profile.expansion_weight > 0 else []
        groups = _stem_groups(added, tokens)
        extra = tuple(stem for group in groups for term in group for stem in term)
        return Query(
            text, words, tokens, corrections, extra, english.glossed, keys, groups, entities
        )

    def rank(self, query: Query, ranker: Ranker = "fused") -> list[tuple[int, float]]:
        """(document, score) pairs, best first; ties go to the earlier document."""
        if ranker == "bm25":
            return _positive(self._lexical(query).total)
        if ranker == "embedding":
            return _ranked(self._similarity(query))
        return [(f.doc, f.score) for f in self._fused(query)]

    def explain(self, query: Query, limit: int) -> list[Explanation]:
        """The fused top `limit`, each with its per-ranker and per-field parts (a synonym
        added by expansion counts under `synonyms`) and its second-stage features' parts."""
        lexical, similarity = self._lexical(query), self._similarity(query)
        fused = self._fused(query, lexical, similarity)[:limit]
        fields = dict(lexical.fields)
        if query.expansion:
            fields["synonyms"] = self.profile.expansion_weight * lexical.expansion
        rerank = self.profile.rerank
        docs = np.array([f.doc for f in fused], dtype=np.intp)
        features = self._features(query, lexical, similarity, docs) if rerank else {}
        model = self.query_model()
        return [
            Explanation(
                f,
                {name: float(part[f.doc]) for name, part in fields.items() if part[f.doc] > 0},
                float(similarity[f.doc]) if similarity.size else 0.0,
                contributions(features, rerank, at) if rerank else {},
                model,
            )
            for at, f in enumerate(fused)
        ]

    def query_model(self) -> str:
        """What embeds a request: the embedder's own account where it gives one (MiniLM
        names its query adapter), else its model id or its kind."""
        embedder = self._embedder
        if isinstance(embedder, QueryEmbedder):
            return embedder.query_model()
        return str(getattr(embedder, "model_id", type(embedder).__name__))

    def _fused(
        self, query: Query, lexical: _Lexical | None = None, similarity: Scores | None = None
    ) -> list[Fused]:
        lexical = lexical or self._lexical(query)
        similarity = self._similarity(query) if similarity is None else similarity
        head = self._first_stage(lexical, similarity)
        rerank = self.profile.rerank
        if rerank is None or not head:
            return head
        docs = np.array([f.doc for f in head], dtype=np.intp)
        return rescore(head, self._features(query, lexical, similarity, docs), rerank)

    def _first_stage(self, lexical: _Lexical, similarity: Scores) -> list[Fused]:
        """The fusion of each ranking's first `depth` documents: the second stage's head.
        Ranking every document would cost more than the rest of a query over 1,000 tools."""
        depth = self.profile.depth
        rankings = {
            "bm25": [doc for doc, _ in _positive(lexical.total, depth)],
            "embedding": [doc for doc, _ in _ranked(similarity, depth)],
        }
        return fuse(rankings, self.profile.ranker_weights, depth=depth)

    def _lexical(self, query: Query) -> _Lexical:
        zeros = np.zeros(self._size, dtype=np.float64)
        if not (query.tokens or query.expansion) or not self._size:
            return _Lexical({}, zeros, zeros)
        fields = self._bm25.field_scores(query.tokens)
        total = zeros.copy()
        for part in fields.values():
            total += part
        expansion = self._expansion_scores(query)
        return _Lexical(fields, expansion, total + self.profile.expansion_weight * expansion)

    def _expansion_scores(self, query: Query) -> Scores:
        """Each thesaurus group's best term per document, summed over the groups: a
        description stuffed with every synonym of a word scores as one that names it once."""
        total = np.zeros(self._size, dtype=np.float64)
        for group in query.expansion_groups:
            best = np.zeros(self._size, dtype=np.float64)
            for term in group:
                np.maximum(best, self._bm25.scores(term), out=best)
            total += best
        return total

    def _features(
        self, query: Query, lexical: _Lexical, similarity: Scores, docs: npt.NDArray[np.intp]
    ) -> dict[str, Scores]:
        """The second stage's features that the profile weighs (`_rerank` names them), for
        `docs` only, in their order: the fused head, not every document of the index."""
        rerank = self.profile.rerank
        if rerank is None:
            return {}
        wanted, found = rerank.wants, {}
        if wanted("cosine"):
            found["cosine"] = similarity[docs] if similarity.size else np.zeros(len(docs))
        if wanted("bm25"):
            found["bm25"] = normalized(lexical.total, docs)
        if wanted("synonyms"):
            found["synonyms"] = normalized(lexical.expansion, docs)
        for name, part in lexical.fields.items():
            if wanted(f"bm25:{name}"):
                found[f"bm25:{name}"] = normalized(part, docs)
            if wanted(f"matched:{name}"):
                found[f"matched:{name}"] = (part[docs] > 0).astype(np.float64)
        if self._actions.size and wanted("matched:action"):
            kinds = action_kinds(query.words)
            mask = np.array([kind in kinds for kind in ACTION_KINDS], dtype=np.float64)
            found["matched:action"] = (self._actions[docs] @ mask > 0).astype(np.float64)
        if similarity.size and self._views:
            vector = self._query_vector(query.embedded)
            for name, vectors in self._views.items():
                found[f"cosine:{name}"] = np.asarray(vectors[docs] @ vector, dtype=np.float64)
        return found

    def _similarity(self, query: Query) -> Scores:
        if not self._size or not query.words:
            return np.zeros(0, dtype=np.float64)
        vector = self._query_vector(query.embedded)
        if not np.any(vector):
            return np.zeros(0, dtype=np.float64)
        return np.asarray(self.vectors @ vector, dtype=np.float64)

    def _query_vector(self, words: str) -> npt.NDArray[np.float32]:
        # `explain` ranks and then reads the cosines: one query, one embedding (a transformer
        # pass of milliseconds). A tuple is replaced whole, so threads never see half of one.
        last = self._last_query
        if last is not None and last[0] == words:
            return last[1]
        embedder = self._embedder
        vectors = (
            embedder.embed_queries([words])
            if isinstance(embedder, QueryEmbedder)
            else embedder.embed([words])
        )
        vector = np.asarray(vectors[0], dtype=np.float32)
        self._last_query = (words, vector)
        return vector


@dataclass(frozen=True)
class _KnownWords:
    """Words the speller leaves alone: the embedding model's and the thesaurus's."""

    vocabulary: Container[str]
    thesaurus: Container[str]

    def __contains__(self, word: object) -> bool:
        return word in self.vocabulary or word in self.thesaurus


@dataclass(frozen=True)
class _Lexical:
    """One query's BM25 evidence: each field's weighted scores, the synonyms' scores (before
    their weight), and the total that ranks."""

    fields: dict[str, Scores]
    expansion: Scores
    total: Scores


def _action_matrix(documents: Sequence[Mapping[str, str]], profile: Profile) -> Scores:
    """One row per document, 1 in each kind of action its `action_field` names; empty where
    the second stage does not weigh `matched:action`."""
    rerank = profile.rerank
    if not profile.action_field or rerank is None or not rerank.wants("matched:action"):
        return np.zeros((0, len(ACTION_KINDS)), dtype=np.float64)
    kinds = [action_kinds(doc.get(profile.action_field, "")) for doc in documents]
    return np.array(
        [[k in found and len(found) < MAX_KINDS for k in ACTION_KINDS] for found in kinds],
        dtype=np.float64,
    )


def _stem_groups(
    terms: Iterable[tuple[str, ...]], typed: Sequence[str]
) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """The stems of each matched word's terms (one tuple per term), less the stems typed and
    those an earlier term has; at most `MAX_EXPANSIONS` stems in all, so a query stuffed with
    thesaurus words still searches mostly for what it says."""
    seen, groups, budget = set(typed), [], MAX_EXPANSIONS
    for group in terms:
        found = []
        for term in group:
            stems = tuple(dict.fromkeys(t for t in analyze(term) if t not in seen))[:budget]
            if stems:
                seen.update(stems)
                found.append(stems)
                budget -= len(stems)
        if found:
            groups.append(tuple(found))
    return tuple(groups)


def _positive(scores: Scores, limit: int | None = None) -> list[tuple[int, float]]:
    # Most documents score 0 for a query's few words: ranking only the rest saves sorting a
    # thousand ties when fewer than `limit` match.
    return _ranked(scores, limit, np.flatnonzero(scores > 0.0))


def _document_vectors(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    if isinstance(embedder, DocumentEmbedder):
        return embedder.embed_documents(list(texts))
    return embedder.embed(list(texts))


def _ranked(
    scores: npt.NDArray[np.float64],
    limit: int | None = None,
    among: npt.NDArray[np.intp] | None = None,
) -> list[tuple[int, float]]:
    """The first `limit` (else all) documents by descending score, of `among` (ascending
    document numbers) or of all; ties in index order, as a stable sort of all would give."""
    candidates = np.arange(scores.size) if among is None else among
    if limit is not None and limit < candidates.size:
        # Everything that scores at least the limit-th best, ties included, then sorted.
        chosen = scores[candidates]
        cut = np.partition(chosen, chosen.size - limit)[chosen.size - limit]
        candidates = candidates[chosen >= cut]
    order = candidates[np.argsort(-scores[candidates], kind="stable")][:limit]
    return [(int(doc), float(scores[doc])) for doc in order]
