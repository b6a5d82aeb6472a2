"""The duplicate index: every issue embedded once (title and body), and each one's nearest others.

The candidates are only suggestions: each worker is shown its issue's top few above a similarity
floor and decides, with a reason, whether one reports the same problem. Building is blocking CPU
work (embedding and one matrix product per block of issues); run it in a thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...runs import SIMILARITY_FLOOR, Issue
from ...services import Embedder, Vectors

TOP_CANDIDATES = 3
MAX_EMBEDDED_BODY = 2000
"""Characters of the body embedded after the title; long logs would drown the words."""
SNIPPET_CHARS = 160
_BLOCK = 512


@dataclass(frozen=True)
class Candidate:
    """A possible duplicate, as a worker is shown it."""

    number: int
    title: str
    snippet: str
    similarity: float


def embedding_text(issue: Issue) -> str:
    return f"{issue.title}\n\n{issue.body[:MAX_EMBEDDED_BODY]}"


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The start of `text` on one line, cut at a word with an ellipsis when longer than `limit`."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + " …"


class DuplicateIndex:
    """Each issue's nearest other issues, computed once for the whole set."""

    def __init__(self, candidates: dict[int, tuple[Candidate, ...]]) -> None:
        self._candidates = candidates

    @classmethod
    def build(
        cls,
        issues: Sequence[Issue],
        embedder: Embedder,
        *,
        floor: float = SIMILARITY_FLOOR,
        top: int = TOP_CANDIDATES,
    ) -> DuplicateIndex:
        vectors = embedder.embed([embedding_text(issue) for issue in issues])
        found: dict[int, tuple[Candidate, ...]] = {}
        for start in range(0, len(issues), _BLOCK):
            scores = vectors[start : start + _BLOCK] @ vectors.T
            for offset, row in enumerate(scores):
                found[issues[start + offset].number] = _nearest(
                    issues, row, start + offset, floor, top
                )
        return cls(found)

    def candidates(self, number: int) -> tuple[Candidate, ...]:
        """Issue `number`'s candidates, most similar first (none for an unknown number)."""
        return self._candidates.get(number, ())


def _nearest(
    issues: Sequence[Issue], row: Vectors, own: int, floor: float, top: int
) -> tuple[Candidate, ...]:
    row = row.copy()
    row[own] = -np.inf
    # Ties go to the lower index, so the order is the same on every run.
    order = np.argsort(-row, kind="stable")[:top]
    return tuple(
        Candidate(
            number=issues[i].number,
            title=issues[i].title,
            snippet=snippet(issues[i].body),
            similarity=round(float(row[i]), 3),
        )
        for i in order
        if row[i] >= floor
    )
