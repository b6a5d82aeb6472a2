"""The second stage of a fused ranking: a weighted sum of features over the first stage's head.

Rank fusion throws away how far apart two documents are; this stage reads the evidence itself.
Its features, each an array over every document of the index:

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


def normalized(scores: Scores) -> Scores:
    """`scores` over their maximum: a BM25 score's scale depends on the query's words."""
    top = float(scores.max()) if scores.size else 0.0
    return scores / top if top > 0 else scores


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


def contributions(features: Mapping[str, Scores], rerank: Rerank, doc: int) -> dict[str, float]:
    """Each weighted feature's part of `doc`'s score, for `--explain` (zero parts left out)."""
    return {
        name: float(rerank.weights[name] * values[doc])
        for name, values in features.items()
        if rerank.wants(name) and values[doc] != 0
    }


def rescore(head: Sequence[Fused], features: Mapping[str, Scores], rerank: Rerank) -> list[Fused]:
    """The first stage's documents by descending weighted feature sum; ties to the lower index.
    Each keeps its first-stage ranks and shares, for `--explain`."""
    docs = np.array([f.doc for f in head], dtype=np.int64)
    total = np.zeros(len(docs), dtype=np.float64)
    for name, values in features.items():
        if rerank.wants(name):
            total += rerank.weights[name] * values[docs]
    rescored = [Fused(f.doc, float(s), f.ranks, f.parts) for f, s in zip(head, total, strict=True)]
    return sorted(rescored, key=lambda f: (-f.score, f.doc))
