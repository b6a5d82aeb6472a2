"""The tool index: BM25 over tool metadata, fused with embedding similarity by reciprocal rank.

An index is immutable: built once from plain `IndexedTool` descriptions (CPU work: async code
uses `build_in_thread`) and searched many times. When MCP lists change, whoever owns the index
builds a new one and swaps it in (`_deferred`). Tokenization lives in `_text`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio.to_thread
import bm25s
import numpy as np
import numpy.typing as npt

from corral.tools import InvalidInput

from .._embedding import Embedder, Vectors, reciprocal_rank_fusion
from ._errors import EmptyQuery
from ._text import embedding_text, tokenize, tool_tokens

# bm25s sets its own logger to DEBUG when imported; its progress notes are not for our users.
logging.getLogger("bm25s").setLevel(logging.WARNING)

Ranker = Literal["fused", "bm25", "embedding"]
DEFAULT_LIMIT = 8
# Each ranking contributes only its head to the fusion: far down either list, a rank says
# little, and a long tail would let the embedding order break every BM25 tie.
FUSION_DEPTH = 50


@dataclass(frozen=True)
class IndexedTool:
    """What the index knows of one tool: exposed name, server, the server's name for it, text."""

    name: str
    server: str
    tool: str
    description: str
    parameters: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """One search result; `score` is the fused (or single-ranker) score, higher is better."""

    name: str
    server: str
    tool: str
    score: float


class ToolIndex:
    """BM25 plus embedding search over a fixed list of tools."""

    def __init__(self, tools: Sequence[IndexedTool], embedder: Embedder) -> None:
        self._tools = tuple(tools)
        self._by_name = {t.name: t for t in self._tools}
        if len(self._by_name) != len(self._tools):
            raise ValueError("tool names in an index must be unique")
        self._embedder = embedder
        self._bm25 = _build_bm25(self._tools)
        self._vectors: Vectors = embedder.embed(
            [embedding_text(t.name, t.description) for t in self._tools]
        )

    @classmethod
    async def build_in_thread(cls, tools: Sequence[IndexedTool], embedder: Embedder) -> ToolIndex:
        """Build in a worker thread, so the event loop keeps running."""
        return await anyio.to_thread.run_sync(cls, tuple(tools), embedder)

    @property
    def tools(self) -> tuple[IndexedTool, ...]:
        return self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> IndexedTool | None:
        return self._by_name.get(name)

    def search(
        self, query: str, limit: int = DEFAULT_LIMIT, *, ranker: Ranker = "fused"
    ) -> list[Hit]:
        """The best `limit` tools for `query`, best first; ties go to the earlier tool."""
        if not query.strip():
            raise EmptyQuery()
        if limit < 1:
            raise InvalidInput(f"limit must be at least 1, not {limit}")
        if not self._tools:
            return []
        if ranker == "bm25":
            return self._hits(self._bm25_ranking(query), limit)
        if ranker == "embedding":
            return self._hits(self._embedding_ranking(query), limit)
        rankings = [self._bm25_ranking(query), self._embedding_ranking(query)]
        heads = [[doc for doc, _ in ranking[:FUSION_DEPTH]] for ranking in rankings]
        return self._hits(reciprocal_rank_fusion(heads), limit)

    async def search_in_thread(
        self, query: str, limit: int = DEFAULT_LIMIT, *, ranker: Ranker = "fused"
    ) -> list[Hit]:
        """`search` in a worker thread (embedding the query is CPU work)."""
        return await anyio.to_thread.run_sync(lambda: self.search(query, limit, ranker=ranker))

    def _bm25_ranking(self, query: str) -> list[tuple[int, float]]:
        vocab: dict[str, int] = self._bm25.vocab_dict
        known = [token for token in tokenize(query) if token in vocab]
        if not known:
            return []
        scores = np.asarray(self._bm25.get_scores(known), dtype=np.float64)
        return [(doc, score) for doc, score in _ranked(scores) if score > 0.0]

    def _embedding_ranking(self, query: str) -> list[tuple[int, float]]:
        vector = self._embedder.embed([query])[0]
        if not np.any(vector):
            return []
        return _ranked(np.asarray(self._vectors @ vector, dtype=np.float64))

    def _hits(self, ranking: Sequence[tuple[int, float]], limit: int) -> list[Hit]:
        tools = self._tools
        return [
            Hit(tools[doc].name, tools[doc].server, tools[doc].tool, round(float(score), 6))
            for doc, score in ranking[:limit]
        ]


def _build_bm25(tools: Sequence[IndexedTool]) -> Any:
    corpus = [tool_tokens(t.name, t.server, t.description, t.parameters) for t in tools]
    retriever = bm25s.BM25()
    if corpus:
        # An empty document would have no tokens at all; the empty token keeps it indexable.
        retriever.index([tokens or [""] for tokens in corpus], show_progress=False)
    return retriever


def _ranked(scores: npt.NDArray[np.float64]) -> list[tuple[int, float]]:
    """Documents by descending score; a stable sort keeps ties in index order."""
    order = np.argsort(-scores, kind="stable")
    return [(int(doc), float(scores[doc])) for doc in order]
