"""Weighted reciprocal-rank fusion of several rankings, keeping each ranker's part.

Rank fusion needs no calibration between BM25 scores and cosine similarities; the weights say
how much each ranker is trusted, and `depth` cuts each ranking to its head, since far down a
list a rank says little and a long tail would let one ranker break every tie of the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

RRF_K = 60


@dataclass(frozen=True)
class Fused:
    """One document's fused score, and each ranker's rank (1-based) and share of it."""

    doc: int
    score: float
    ranks: Mapping[str, int] = field(default_factory=dict)
    parts: Mapping[str, float] = field(default_factory=dict)


def fuse(
    rankings: Mapping[str, Sequence[int]],
    weights: Mapping[str, float],
    *,
    depth: int,
    k: int = RRF_K,
) -> list[Fused]:
    """Documents by descending sum of `weight / (k + rank)`; ties go to the lower index."""
    ranks: dict[int, dict[str, int]] = {}
    parts: dict[int, dict[str, float]] = {}
    for name, ranking in rankings.items():
        weight = weights.get(name, 0.0)
        if weight <= 0:
            continue
        for rank, doc in enumerate(ranking[:depth], start=1):
            ranks.setdefault(doc, {})[name] = rank
            parts.setdefault(doc, {})[name] = weight / (k + rank)
    fused = [Fused(doc, sum(p.values()), ranks[doc], p) for doc, p in parts.items()]
    return sorted(fused, key=lambda f: (-f.score, f.doc))
