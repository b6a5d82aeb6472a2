"""Which memories a turn recalls: the issue's relevance formula, with the clock passed in.

Of the memories on offer, the `NEAREST` most similar to the turn's text (cosine of their
embeddings) are ranked by

    relevance = similarity * exp(-age_hours / 168) * (1.5 if same project else 1)
                * (1 + Jaccard(memory's files, files changed in this run))

and the top `KEPT` are kept. Pure: no store, no model, no clock of its own.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from ._records import MemoryRecord

NEAREST = 20
KEPT = 10
DECAY_HOURS = 168.0
"""A week: a memory's weight falls by e every 168 hours."""
SAME_PROJECT = 1.5


@dataclass(frozen=True)
class Ranked:
    memory: MemoryRecord
    similarity: float
    relevance: float


def jaccard(a: Collection[str], b: Collection[str]) -> float:
    """|a & b| / |a | b| (as sets); 0 when both are empty."""
    union = set(a) | set(b)
    return len(set(a) & set(b)) / len(union) if union else 0.0


def relevance(similarity: float, age_hours: float, *, same_project: bool, overlap: float) -> float:
    """The formula above for one memory; `overlap` is the Jaccard index of the files."""
    project = SAME_PROJECT if same_project else 1.0
    return similarity * math.exp(-age_hours / DECAY_HOURS) * project * (1.0 + overlap)


def similarities(query: Sequence[float], memories: Sequence[MemoryRecord]) -> list[float]:
    """Cosine similarity of `query` to each memory's embedding (0 where a size differs)."""
    q = np.asarray(query, dtype=np.float64)
    q_norm = float(np.linalg.norm(q))
    out: list[float] = []
    for memory in memories:
        v = np.asarray(memory.embedding, dtype=np.float64)
        norm = float(np.linalg.norm(v)) * q_norm
        same = v.shape == q.shape and norm > 0
        out.append(float(np.dot(q, v) / norm) if same else 0.0)
    return out


def rank(
    query: Sequence[float],
    memories: Sequence[MemoryRecord],
    *,
    project: str,
    changed_files: Collection[str],
    now: float,
) -> list[Ranked]:
    """The `KEPT` most relevant of the `NEAREST` most similar memories, best first."""
    sims = similarities(query, memories)
    nearest = sorted(zip(memories, sims, strict=True), key=lambda p: (-p[1], p[0].memory_id))
    ranked = [
        Ranked(
            memory,
            sim,
            relevance(
                sim,
                max(0.0, now - memory.created_at) / 3600.0,
                same_project=memory.project == project,
                overlap=jaccard(memory.files, changed_files),
            ),
        )
        for memory, sim in nearest[:NEAREST]
    ]
    ranked.sort(key=lambda r: (-r.relevance, r.memory.memory_id))
    return ranked[:KEPT]
