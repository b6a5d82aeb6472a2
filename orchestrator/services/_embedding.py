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
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from corral.tools import OperationFailed

from ._vector_cache import VectorCache, default_cache_dir

Vectors = npt.NDArray[np.float32]


class EmbeddingUnavailable(OperationFailed):
    """The bundled embedding model could not be loaded."""


class Embedder(Protocol):
    """Turns texts into unit-length vectors; similar meanings give high dot products."""

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class DocumentEmbedder(Protocol):
    """An embedder that can keep document vectors between runs (see `_vector_cache`)."""

    def embed_documents(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class QueryEmbedder(Protocol):
    """An embedder that places a request near the documents that answer it, not only near
    texts that say the same (MiniLM with corral's query adapter)."""

    def embed_queries(self, texts: Sequence[str]) -> Vectors: ...

    def query_model(self) -> str:
        """What embeds a request (the model, and the adapter where one is in use), for
        `--explain`."""
        ...


@runtime_checkable
class VocabularySource(Protocol):
    """An embedder that knows real words, so spelling correction leaves them alone."""

    def vocabulary(self) -> frozenset[str]: ...


class WordLlamaEmbedder:
    """WordLlama (static token embeddings, 256 dimensions), loaded once per process.

    Document vectors are cached on disk (`cache`, by default `default_cache_dir()`); `None`
    turns the cache off.
    """

    _lock = threading.Lock()
    _model: Any = None
    _vocabulary: frozenset[str] | None = None

    def __init__(self, cache: VectorCache | Literal["default"] | None = "default") -> None:
        self._cache = VectorCache(default_cache_dir()) if cache == "default" else cache

    @property
    def model_id(self) -> str:
        return f"wordllama-{_wordllama_version()}-l2_supercat-256"

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self._cache is None or not texts:
            return self.embed(texts)
        return self._cache.vectors(self.model_id, texts, self.embed)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 256), dtype=np.float32)
        # A lone surrogate (a JSON escape can carry one into a tool description) would make
        # the tokenizer refuse the whole batch; it becomes a replacement mark instead.
        clean = [text.encode("utf-8", "replace").decode("utf-8") for text in texts]
        vectors = np.asarray(self._load().embed(clean, norm=True), dtype=np.float32)
        return vectors

    def vocabulary(self) -> frozenset[str]:
        """The whole words of the model's tokenizer, lower-cased: a dictionary of real words
        that a spelling corrector must leave alone even where no document uses them."""
        cls = type(self)
        if cls._vocabulary is None:
            vocab: dict[str, int] = self._load().tokenizer.get_vocab()
            cls._vocabulary = frozenset(
                token[1:].lower()
                for token in vocab
                if token.startswith(_WORD_START) and token[1:].isalpha()
            )
        return cls._vocabulary

    @classmethod
    def _load(cls) -> Any:
        with cls._lock:
            if cls._model is None:
                cls._model = _load_bundled_wordllama()
            return cls._model


# SentencePiece marks a token that starts a word with U+2581 ("lower one eighth block").
_WORD_START = "\u2581"


def _wordllama_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wordllama")
    except PackageNotFoundError:  # pragma: no cover - a dependency of corral
        return "unknown"


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
