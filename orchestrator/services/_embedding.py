"""Text embeddings for tool search and skill matching, from a model that ships in its wheel.

`WordLlamaEmbedder` loads WordLlama's bundled 256-dimension weights and tokenizer from the
installed package, with downloads turned off: nothing is fetched at run time. `HashingEmbedder`
is the in-memory twin for tests of code above this seam.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from corral.tools import OperationFailed

Vectors = npt.NDArray[np.float32]


class EmbeddingUnavailable(OperationFailed):
    """The bundled embedding model could not be loaded."""


class Embedder(Protocol):
    """Turns texts into unit-length vectors; similar meanings give high dot products."""

    def embed(self, texts: Sequence[str]) -> Vectors: ...


class WordLlamaEmbedder:
    """WordLlama (static token embeddings, 256 dimensions), loaded once per process."""

    _lock = threading.Lock()
    _model: Any = None

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 256), dtype=np.float32)
        vectors = np.asarray(self._load().embed(list(texts), norm=True), dtype=np.float32)
        return vectors

    @classmethod
    def _load(cls) -> Any:
        with cls._lock:
            if cls._model is None:
                cls._model = _load_bundled_wordllama()
            return cls._model


def _load_bundled_wordllama() -> Any:
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError as exc:  # pragma: no cover - a dependency of corral
        raise EmbeddingUnavailable("the wordllama package is missing; reinstall corral") from exc
    package = Path(wordllama.__file__).parent
    try:
        # The wheel keeps its files in `weights/` and `tokenizers/`, which is the layout of
        # WordLlama's cache folder, so the package folder serves as a cache that never misses.
        return WordLlama.load(cache_dir=package, disable_download=True)
    except (FileNotFoundError, OSError) as exc:
        raise EmbeddingUnavailable(f"cannot load the bundled WordLlama model: {exc}") from exc


class HashingEmbedder:
    """Hashed bag of lower-cased words: deterministic, instant, no model. For tests."""

    def __init__(self, dim: int = 128) -> None:
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]], *, k: int = 60
) -> list[tuple[int, float]]:
    """Fuse several best-first rankings of document indices: score = sum of 1 / (k + rank)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
