"""Field-aware BM25: one bm25s index per field, scores summed with a weight per field.

A word in a tool's name says more than the same word in a parameter's description; one BM25
over the concatenated text cannot tell them apart, and a long description drowns a short name.
Each field keeps its own length normalisation and document frequencies, and `explain` returns
the per-field parts of a document's score.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt

from ._analyzer import analyze

# bm25s sets its own logger to DEBUG when imported; its progress notes are not for our users.
logging.getLogger("bm25s").setLevel(logging.WARNING)

Scores = npt.NDArray[np.float64]


class FieldedBM25:
    """BM25 over named text fields of a fixed list of documents."""

    def __init__(
        self, documents: Sequence[Mapping[str, str]], weights: Mapping[str, float]
    ) -> None:
        self.weights = dict(weights)
        self._size = len(documents)
        self._fields: dict[str, Any] = {}
        for field, weight in self.weights.items():
            if weight > 0 and documents:
                self._fields[field] = _index([analyze(d.get(field, "")) for d in documents])

    def field_scores(self, tokens: Sequence[str]) -> dict[str, Scores]:
        """Each field's weighted BM25 scores for the query `tokens`, one per document."""
        parts: dict[str, Scores] = {}
        for field, retriever in self._fields.items():
            vocab: Mapping[str, int] = retriever.vocab_dict
            known = [t for t in tokens if t in vocab]
            if known:
                raw = np.asarray(retriever.get_scores(known), dtype=np.float64)
                parts[field] = raw * self.weights[field]
        return parts

    def scores(self, tokens: Sequence[str]) -> Scores:
        """The summed field scores for `tokens`, one per document."""
        total = np.zeros(self._size, dtype=np.float64)
        for part in self.field_scores(tokens).values():
            total += part
        return total


def _index(corpus: list[list[str]]) -> Any:
    retriever = bm25s.BM25()
    # An empty field has no tokens at all; the empty token keeps its document indexable.
    retriever.index([tokens or [""] for tokens in corpus], show_progress=False)
    return retriever
