"""The second stage of a fused ranking: a weighted sum of features over the first stage's head.

Rank fusion throws away how far apart two documents are; this stage reads the evidence itself.
Its features, each an array over the head's documents in the head's order (computed for the head
alone, a tenth of 1,000 tools):

- `cosine`: the query's cosine to the document's main embedded text;
- `cosine:<view>`: its cosine to another text of the same document (a tool's name alone, its
  parameters), so a query that matches one facet well is not lost in the average;
- `cosine:<group>`: its cosine to the mean vector of the document's group (a tool's server),
  evidence of the product or area a request is about, learned from the documents themselves;
- `bm25`, `bm25:<field>`, `synonyms`: BM25 scores divided by their best over all documents;
- `matched:<field>`: 1 where a query word matched that field (a query naming the server);
- `matched:action`: 1 where the request's kind of action (create, read, list, update, delete)
  is one the document's name does (`_actions`).

The weights are a linear ranking model fitted on the tuning part of the dev set only (see
docs/retrieval.md), listwise: within one query, only differences between documents count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._fusion import Fused

Scores = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Rerank:
    """Feature name to weight; features without a weight are never computed."""

    weights: Mapping[str, float]

    def wants(self, feature: str) -> bool:
        return self.weights.get(feature, 0.0) != 0.0


def normalized(scores: Scores, docs: npt.NDArray[np.intp] | None = None) -> Scores:
    """`scores` (of `docs` only, when given) over their maximum over every document: a BM25
    score's scale depends on the query's words."""
    top = float(scores.max()) if scores.size else 0.0
    chosen = scores if docs is None else scores[docs]
    return chosen / top if top > 0 else chosen


def group_centroids(vectors: npt.NDArray[np.float32], groups: Sequence[str]) -> Scores:
    """For each document, the unit mean vector of its group's documents (one row each)."""
    names = sorted(set(groups))
    member = np.array([names.index(g) for g in groups], dtype=np.int64)
    means = np.zeros((len(names), vectors.shape[1]), dtype=np.float64)
    np.add.at(means, member, vectors.astype(np.float64))
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    means = np.divide(means, norms, out=np.zeros_like(means), where=norms > 0)
    centroids: Scores = means[member]
    return centroids


def contributions(features: Mapping[str, Scores], rerank: Rerank, at: int) -> dict[str, float]:
    """Each weighted feature's part of the score of the document at position `at` of the
    features' documents, for `--explain` (zero parts left out)."""
    return {
        name: float(rerank.weights[name] * values[at])
        for name, values in features.items()
        if rerank.wants(name) and values[at] != 0
    }


def rescore(head: Sequence[Fused], features: Mapping[str, Scores], rerank: Rerank) -> list[Fused]:
    """The first stage's documents by descending weighted feature sum (`features` hold one
    value per document of `head`, in its order); ties to the lower index. Each keeps its
    first-stage ranks and shares, for `--explain`."""
    total = np.zeros(len(head), dtype=np.float64)
    for name, values in features.items():
        if rerank.wants(name):
            total += rerank.weights[name] * values
    rescored = [Fused(f.doc, float(s), f.ranks, f.parts) for f, s in zip(head, total, strict=True)]
    return sorted(rescored, key=lambda f: (-f.score, f.doc))
