"""The tool index: typo-tolerant fielded BM25 over tool metadata, fused with embedding
similarity by weighted reciprocal rank (`retrieval.HybridIndex`).

An index is immutable: built once from plain `IndexedTool` descriptions (CPU work: async code
uses `build_in_thread`) and searched many times. When MCP lists change, whoever owns the index
builds a new one and swaps it in (`_deferred`). The weights below were chosen on the tuning
part of `benchmarks/data/retrieval` (see docs/retrieval.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import anyio.to_thread

from corral.tools import InvalidInput

from .._embedding import Embedder
from ..retrieval import Explanation, HybridIndex, Profile, Query, Ranker, Rerank
from ._errors import EmptyQuery
from ._text import embedding_text, name_text, parameters_text, tool_document

DEFAULT_LIMIT = 8
TOOL_PROFILE = Profile(
    # Parameter names help a little ("channel_id", "timezone"); their descriptions were noise.
    field_weights={"name": 1.0, "server": 1.0, "description": 1.0, "parameters": 0.3},
    # MiniLM's ranking alone beats fielded BM25 on the tuning part; weights from 1.2 to 2 were
    # within a query of each other, and 1.5 is the middle of that plateau.
    ranker_weights={"bm25": 1.0, "embedding": 1.5},
    # Each ranking contributes only its head to the fusion: far down either list, a rank says
    # little, and a long tail would let the embedding order break every BM25 tie.
    depth=50,
    expansion_weight=1.0,
    # The fused head is rescored by a linear model of the evidence, fitted listwise on the
    # tuning part alone (L2 1.0; `benchmarks.retrieval_fit`; round 5: 464 tune queries,
    # recall@5 0.918 and recall@1 0.683 in 5-fold cross-validation over it). Cosines carry most
    # of it; a tool's name alone, its parameters and its server's mean vector each add what the
    # main text blurs, and the kind of action separates near duplicates on one server.
    rerank=Rerank(
        {
            "cosine": 13.1,
            "cosine:name": 6.0,
            "cosine:parameters": 5.0,
            "cosine:server": 1.8,
            "bm25": 3.45,
            "bm25:name": -1.26,
            "bm25:description": 0.63,
            "matched:server": 1.36,
            "synonyms": 0.45,
            "matched:action": 1.07,
        }
    ),
    group_field="server",
    action_field="name",
)


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


@dataclass(frozen=True)
class ToolExplanation:
    """Why a tool ranked where it did: the query as the rankers saw it and each part."""

    hit: Hit
    query: Query
    why: Explanation


class ToolIndex:
    """Fielded BM25 plus embedding search over a fixed list of tools."""

    def __init__(self, tools: Sequence[IndexedTool], embedder: Embedder) -> None:
        self._tools = tuple(tools)
        self._by_name = {t.name: t for t in self._tools}
        if len(self._by_name) != len(self._tools):
            raise ValueError("tool names in an index must be unique")
        self._index = HybridIndex(
            [tool_document(t.tool, t.server, t.description, t.parameters) for t in self._tools],
            [embedding_text(t.tool, t.server, t.description) for t in self._tools],
            embedder,
            TOOL_PROFILE,
            {
                "name": [name_text(t.tool, t.server) for t in self._tools],
                "parameters": [parameters_text(t.tool, t.parameters) for t in self._tools],
            },
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
        parsed = self._parse(query, limit)
        if not self._tools:
            return []
        return [self._hit(doc, score) for doc, score in self._index.rank(parsed, ranker)[:limit]]

    def explain(self, query: str, limit: int = DEFAULT_LIMIT) -> list[ToolExplanation]:
        """The fused best `limit`, each with its per-ranker and per-field score parts."""
        parsed = self._parse(query, limit)
        if not self._tools:
            return []
        return [
            ToolExplanation(self._hit(why.fused.doc, why.fused.score), parsed, why)
            for why in self._index.explain(parsed, limit)
        ]

    async def search_in_thread(
        self, query: str, limit: int = DEFAULT_LIMIT, *, ranker: Ranker = "fused"
    ) -> list[Hit]:
        """`search` in a worker thread (embedding the query is CPU work)."""
        return await anyio.to_thread.run_sync(lambda: self.search(query, limit, ranker=ranker))

    def _parse(self, query: str, limit: int) -> Query:
        if not query.strip():
            raise EmptyQuery()
        if limit < 1:
            raise InvalidInput(f"limit must be at least 1, not {limit}")
        return self._index.query(query)

    def _hit(self, doc: int, score: float) -> Hit:
        tool = self._tools[doc]
        return Hit(tool.name, tool.server, tool.tool, round(float(score), 6))
