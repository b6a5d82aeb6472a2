"""Fits the weights of tool search's second stage on the tune part of the retrieval dev set, and
reports 5-fold cross-validation within tune: how `TOOL_PROFILE.rerank` was chosen.

The model is linear and listwise: for each tune query, a softmax over the fused head's
documents, trained to put its mass on the expected tools; L2 on standardised features. The
test part is never read. Run from the repo root:

    .venv/bin/python -m benchmarks.retrieval_fit [--l2 1.0]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from corral.orchestrator.services import MiniLMEmbedder
from corral.orchestrator.services.toolsearch import ToolIndex, load_catalog
from corral.orchestrator.services.toolsearch._index import TOOL_PROFILE

from ._retrieval_data import SHARED, TOOL_QUERIES, read_queries

Matrix = npt.NDArray[np.float64]
FEATURES = tuple(TOOL_PROFILE.rerank.weights) if TOOL_PROFILE.rerank else ()
Sample = tuple[Matrix, Matrix]  # one query's head: features per document, 1 where expected


def samples(
    index: ToolIndex, texts: Sequence[str], expected: Sequence[frozenset[str]]
) -> list[Sample]:
    """Each query's fused head as a feature matrix, with its relevance labels."""
    hybrid = index._index
    found = []
    for text, wanted in zip(texts, expected, strict=True):
        query = hybrid.query(text)
        lexical, similarity = hybrid._lexical(query), hybrid._similarity(query)
        head = hybrid._fused(query, lexical, similarity)
        docs = np.array([f.doc for f in head], dtype=np.intp)
        features = hybrid._features(query, lexical, similarity, docs)
        zeros = np.zeros(len(docs), dtype=np.float64)
        x = np.stack([features.get(name, zeros) for name in FEATURES], axis=1)
        y = np.array([index.tools[d].name in wanted for d in docs], dtype=np.float64)
        if y.any():
            found.append((x, y))
    return found


def fit(train: Sequence[Sample], l2: float, steps: int = 3000, rate: float = 0.5) -> Matrix:
    """Weights per raw feature (standardisation folded in), by gradient descent over all
    queries at once: each head padded to the longest, padding masked out of the softmax."""
    stacked = np.concatenate([x for x, _ in train])
    mean, scale = stacked.mean(axis=0), stacked.std(axis=0) + 1e-9
    longest = max(len(y) for _, y in train)
    x_all = np.zeros((len(train), longest, len(FEATURES)), dtype=np.float64)
    target = np.zeros((len(train), longest), dtype=np.float64)
    mask = np.full((len(train), longest), -np.inf)
    for row, (x, y) in enumerate(train):
        x_all[row, : len(y)] = (x - mean) / scale
        target[row, : len(y)] = y / y.sum()
        mask[row, : len(y)] = 0.0
    w = np.zeros(len(FEATURES), dtype=np.float64)
    for _ in range(steps):
        s = x_all @ w + mask
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        w -= rate * (l2 * w + np.einsum("ql,qlf->f", p - target, x_all)) / len(train)
    weights: Matrix = w / scale
    return weights


def recall(weights: Matrix, part: Sequence[Sample], k: int) -> float:
    return sum(bool(y[np.argsort(-(x @ weights), kind="stable")[:k]].any()) for x, y in part) / len(
        part
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--l2", type=float, default=1.0)
    args = parser.parse_args(argv)
    tools = load_catalog(SHARED / "tools")
    tune = [q for q in read_queries(TOOL_QUERIES, {t.name for t in tools}) if q.part == "tune"]
    index = ToolIndex(tools, MiniLMEmbedder())
    # One query at a time, to know each kept sample's round; a query whose expected tool is
    # outside the head is dropped here and counts as a miss below.
    data, rounds = [], []
    for query in tune:
        for sample in samples(index, [query.text], [query.expected]):
            data.append(sample)
            rounds.append(query.written)
    folds = np.array_split(np.random.default_rng(0).permutation(len(data)), 5)
    hit1, hit5 = np.zeros(len(data), dtype=bool), np.zeros(len(data), dtype=bool)
    for k, fold in enumerate(folds):
        weights = fit([data[i] for j, f in enumerate(folds) if j != k for i in f], args.l2)
        for i in fold:
            hit1[i] = recall(weights, [data[i]], 1) > 0
            hit5[i] = recall(weights, [data[i]], 5) > 0
    print(
        f"5-fold cross-validation on tune: recall@1 {hit1.sum() / len(tune):.3f}, "
        f"recall@5 {hit5.sum() / len(tune):.3f}"
    )
    for written in sorted(set(rounds)):
        total = sum(q.written == written for q in tune)
        mine = np.array(rounds) == written
        print(
            f"  round {written}'s {total} tune queries: recall@1 {hit1[mine].sum() / total:.3f}, "
            f"recall@5 {hit5[mine].sum() / total:.3f}"
        )
    weights = fit(data, args.l2)
    for name, weight in zip(FEATURES, weights, strict=True):
        print(f"{name:20} {weight:8.3f}")


if __name__ == "__main__":
    main()
