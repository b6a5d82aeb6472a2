"""Fits the weights of a second stage (tool search's, or with `--skills` skill matching's) on the
tune part of the retrieval dev set, and reports 5-fold cross-validation within tune: how
`TOOL_PROFILE.rerank` and `SKILL_PROFILE.rerank` were chosen.

The model is linear and listwise: for each tune query, a softmax over the fused head's
documents, trained to put its mass on the expected ones; L2 on standardised features. The test
part is never read.

The shipped query adapter was trained on the tune part, so the cosines it gives tune requests
are better than those of requests it has not read, and a model fitted on them trusts the cosine
too much. `--no-adapter` embeds the requests with the model's own vectors; to fit on an older
adapter, run from a checkout whose `orchestrator/services/minilm_query_adapter.npz` is that
adapter, with `--rounds` naming the rounds it had not read. `--save` keeps a run's samples, and
`--also` adds saved ones to the final fit. Run from the repo root:

    .venv/bin/python -m benchmarks.retrieval_fit [--skills] [--no-adapter] [--rounds 13]
        [--l2 1.0] [--save FILE.npz] [--also FILE.npz ...]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from corral.orchestrator.services import MiniLMEmbedder
from corral.orchestrator.services._embedding import Embedder, Vectors
from corral.orchestrator.services.retrieval import HybridIndex, Rerank
from corral.orchestrator.services.skills import SkillMatcher, SkillRoot, load_skills
from corral.orchestrator.services.skills._match import SKILL_PROFILE
from corral.orchestrator.services.toolsearch import ToolIndex, load_catalog
from corral.orchestrator.services.toolsearch._index import TOOL_PROFILE

from ._retrieval_data import SHARED, SKILL_QUERIES, TOOL_QUERIES, Query, read_queries

Matrix = npt.NDArray[np.float64]
Sample = tuple[Matrix, Matrix]  # one query's head: features per document, 1 where expected
FEATURES = tuple(TOOL_PROFILE.rerank.weights) if TOOL_PROFILE.rerank else ()


@dataclass(frozen=True)
class Kind:
    """What is ranked: its index, each document's name, the shipped weights, the cut-offs."""

    index: HybridIndex
    names: Sequence[str]
    rerank: Rerank
    cutoffs: tuple[int, int]
    labels: tuple[str, str]

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.rerank.weights)


class _Unadapted:
    """MiniLM without the query adapter: a request is embedded as a document is."""

    def __init__(self, model: MiniLMEmbedder) -> None:
        self._model = model
        self.model_id = f"{model.model_id} without the query adapter"

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._model.embed_documents(texts)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._model.embed_documents(texts)

    def vocabulary(self) -> frozenset[str]:
        return self._model.vocabulary()


def samples(kind: Kind, queries: Sequence[Query]) -> tuple[list[Sample], list[bool]]:
    """Each query's fused head as a feature matrix, with its relevance labels (queries whose
    expected document is outside the head are left out), and whether the first stage alone
    put an expected document within each cut-off, per query."""
    hybrid = kind.index
    found: list[Sample] = []
    first: list[bool] = []
    for query in queries:
        parsed = hybrid.query(query.text)
        lexical, similarity = hybrid._lexical(parsed), hybrid._similarity(parsed)
        head = hybrid._first_stage(lexical, similarity)
        docs = np.array([f.doc for f in head], dtype=np.intp)
        features = hybrid._features(parsed, lexical, similarity, docs)
        zeros = np.zeros(len(docs), dtype=np.float64)
        x = np.stack([features.get(name, zeros) for name in kind.features], axis=1)
        y = np.array([kind.names[d] in query.expected for d in docs], dtype=np.float64)
        first.extend(bool(y[:k].any()) for k in kind.cutoffs)
        if y.any():
            found.append((x, y))
    return found, first


def fit(train: Sequence[Sample], l2: float, steps: int = 3000, rate: float = 0.5) -> Matrix:
    """Weights per raw feature (standardisation folded in), by gradient descent over all
    queries at once: each head padded to the longest, padding masked out of the softmax."""
    stacked = np.concatenate([x for x, _ in train])
    mean, scale = stacked.mean(axis=0), stacked.std(axis=0) + 1e-9
    longest = max(len(y) for _, y in train)
    features = stacked.shape[1]
    x_all = np.zeros((len(train), longest, features), dtype=np.float64)
    target = np.zeros((len(train), longest), dtype=np.float64)
    mask = np.full((len(train), longest), -np.inf)
    for row, (x, y) in enumerate(train):
        x_all[row, : len(y)] = (x - mean) / scale
        target[row, : len(y)] = y / y.sum()
        mask[row, : len(y)] = 0.0
    w = np.zeros(features, dtype=np.float64)
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


def build(skills: bool, adapter: bool) -> Kind:
    model = MiniLMEmbedder()
    embedder: Embedder = model if adapter else _Unadapted(model)
    if skills:
        catalog = load_skills([SkillRoot(SHARED / "skills", "extra")])
        matcher = SkillMatcher(catalog, embedder)
        assert SKILL_PROFILE.rerank is not None
        names = [skill.name for skill in matcher.skills]
        return Kind(matcher._index, names, SKILL_PROFILE.rerank, (1, 3), ("top-1", "top-3"))
    index = ToolIndex(load_catalog(SHARED / "tools"), embedder)
    assert TOOL_PROFILE.rerank is not None
    names = [tool.name for tool in index.tools]
    return Kind(index._index, names, TOOL_PROFILE.rerank, (1, 5), ("recall@1", "recall@5"))


def cross_validated(data: Sequence[Sample], l2: float, cutoffs: tuple[int, int]) -> Matrix:
    """Per sample, whether weights fitted on the other four folds hit within each cut-off."""
    hits = np.zeros((len(data), len(cutoffs)), dtype=bool)
    folds = np.array_split(np.random.default_rng(0).permutation(len(data)), 5)
    for k, fold in enumerate(folds):
        weights = fit([data[i] for j, f in enumerate(folds) if j != k for i in f], l2)
        for i in fold:
            hits[i] = [recall(weights, [data[i]], cut) > 0 for cut in cutoffs]
    return hits.astype(np.float64)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--skills", action="store_true", help="skill matching's second stage")
    parser.add_argument("--no-adapter", action="store_true", help="embed requests unadapted")
    parser.add_argument("--rounds", default="", help="only these rounds' tune queries: 11,13")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--save", type=Path, help="keep this run's samples in an .npz file")
    parser.add_argument("--also", type=Path, nargs="*", default=[], help="saved samples")
    args = parser.parse_args(argv)
    kind = build(args.skills, not args.no_adapter)
    rounds = {int(r) for r in args.rounds.split(",") if r.strip()}
    path = SKILL_QUERIES if args.skills else TOOL_QUERIES
    tune = [
        q
        for q in read_queries(path, kind.names)
        if q.part == "tune" and (not rounds or q.written in rounds)
    ]
    data, first = samples(kind, tune)
    shipped = np.array(list(kind.rerank.weights.values()), dtype=np.float64)
    n, (a, b) = len(tune), kind.labels
    firsts = np.array(first, dtype=np.float64).reshape(n, 2).sum(axis=0) / n
    hits = cross_validated(data, args.l2, kind.cutoffs).sum(axis=0) / n
    as_shipped = [sum(recall(shipped, [s], cut) > 0 for s in data) / n for cut in kind.cutoffs]
    print(f"{n} tune queries ({len(data)} with an expected document in the head)")
    print(f"  first stage alone:             {a} {firsts[0]:.3f}, {b} {firsts[1]:.3f}")
    print(f"  the shipped weights:           {a} {as_shipped[0]:.3f}, {b} {as_shipped[1]:.3f}")
    print(f"  5-fold cross-validation:       {a} {hits[0]:.3f}, {b} {hits[1]:.3f}")
    if args.save:
        _save(args.save, data)
    extra = [sample for saved in args.also for sample in _load(saved)]
    weights = fit([*data, *extra], args.l2)
    print(f"fitted on {len(data)} + {len(extra)} saved samples:")
    for name, weight in zip(kind.features, weights, strict=True):
        print(f"  {name:20} {weight:8.3f}")


def _save(path: Path, data: Sequence[Sample]) -> None:
    arrays = {f"x{i}": x for i, (x, _) in enumerate(data)}
    arrays.update({f"y{i}": y for i, (_, y) in enumerate(data)})
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]


def _load(path: Path) -> list[Sample]:
    with np.load(path) as saved:
        count = sum(1 for key in saved.files if key.startswith("x"))
        return [(saved[f"x{i}"], saved[f"y{i}"]) for i in range(count)]


if __name__ == "__main__":
    main()
