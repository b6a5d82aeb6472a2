"""corral's query adapter for all-MiniLM-L6-v2: a low-rank change to the encoder's weights that
only a request's text goes through.

MiniLM was trained to place sentences that mean the same near each other, not a request near
the tool or skill that does it ("more replicas of the web app" and "scale a deployment" share
no words and little sentence). The adapter is a LoRA delta (`W + B @ A`, rank 8) on each of
the six layers' attention and feed-forward products, trained with the document vectors held
fixed (`benchmarks/retrieval_adapter.py`), so documents keep the model's own vectors (and
their cache) and only queries move towards them. It ships with corral as one `.npz` of a few
hundred kilobytes; nothing is downloaded.

The file is read with `allow_pickle=False`, and every array must name a product the model
has, with the shape that product needs, and hold finite numbers; anything else is refused
with `EmbeddingUnavailable`, and queries are then embedded by the model unchanged.
"""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ._embedding import EmbeddingUnavailable

ADAPTER_FILE = Path(__file__).resolve().parent / "minilm_query_adapter.npz"
# `encoder.layer.<n>.<product>.lora_a` (rank x in) and `.lora_b` (out x rank, scale applied).
_KEY = re.compile(
    r"(encoder\.layer\.\d+\."
    r"(?:attention\.self\.(?:query|key|value)|attention\.output\.dense|intermediate\.dense"
    r"|output\.dense))\.lora_([ab])"
)
_MAX_RANK = 64

Weights = Mapping[str, npt.NDArray[np.generic]]
# Each weight's shape by name: enough to check an adapter against, without reading the weights.
Shapes = Mapping[str, tuple[int, ...]]


def shapes_of(weights: Weights) -> dict[str, tuple[int, ...]]:
    return {name: tuple(array.shape) for name, array in weights.items()}


@dataclass(frozen=True)
class QueryAdapter:
    """A checked adapter: each product's A (rank x in) and B (out x rank, scaled)."""

    pairs: Mapping[str, tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]
    # A short SHA-256 of the file: it names the requests' int8 graph.
    digest: str

    def applied_to(self, weights: Weights) -> Weights:
        """`weights` with `B @ A` added to each product: a view, each array read from
        `weights` (and merged) when asked for; the base arrays are not changed."""
        return _Adapted(weights, self.pairs)


class _Adapted(Mapping[str, npt.NDArray[np.generic]]):
    def __init__(
        self,
        weights: Weights,
        pairs: Mapping[str, tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]],
    ) -> None:
        self._weights = weights
        self._deltas = {f"{product}.weight": pair for product, pair in pairs.items()}

    def __getitem__(self, name: str) -> npt.NDArray[np.generic]:
        base = self._weights[name]
        if name not in self._deltas:
            return base
        a, b = self._deltas[name]
        return (base.astype(np.float32) + b @ a).astype(np.float32)

    def __iter__(self) -> Iterator[str]:
        return iter(self._weights)

    def __len__(self) -> int:
        return len(self._weights)


def load_adapter(shapes: Shapes, path: Path = ADAPTER_FILE) -> QueryAdapter:
    """The adapter in `path`, checked against the shapes of the model's weights."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise EmbeddingUnavailable(f"cannot read the query adapter {path}: {exc}") from exc
    pairs = _read_pairs(path, content)
    for product, (a, b) in pairs.items():
        base = shapes.get(f"{product}.weight")
        if base is None or len(base) != 2:
            raise EmbeddingUnavailable(f"query adapter {path}: the model has no {product}")
        out, inputs = base
        if a.shape[1] != inputs or b.shape[0] != out:
            raise EmbeddingUnavailable(
                f"query adapter {path}: {product} is {out}x{inputs}, the adapter's "
                f"{b.shape[0]}x{a.shape[1]}"
            )
    return QueryAdapter(pairs, hashlib.sha256(content).hexdigest()[:16])


def _read_pairs(
    path: Path, content: bytes
) -> dict[str, tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]:
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as archive:
            arrays = {name: np.asarray(archive[name]) for name in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise EmbeddingUnavailable(f"cannot read the query adapter {path}: {exc}") from exc
    halves: dict[str, dict[str, npt.NDArray[np.float32]]] = {}
    for name, array in arrays.items():
        match = _KEY.fullmatch(name)
        if match is None:
            raise EmbeddingUnavailable(f"query adapter {path}: unexpected array {name!r}")
        if array.ndim != 2 or array.dtype.kind != "f" or not np.all(np.isfinite(array)):
            raise EmbeddingUnavailable(f"query adapter {path}: {name} is not a finite matrix")
        halves.setdefault(match.group(1), {})[match.group(2)] = array.astype(np.float32)
    pairs = {}
    for product, half in halves.items():
        if set(half) != {"a", "b"}:
            raise EmbeddingUnavailable(f"query adapter {path}: {product} lacks one of A and B")
        a, b = half["a"], half["b"]
        if a.shape[0] != b.shape[1] or not 0 < a.shape[0] <= _MAX_RANK:
            raise EmbeddingUnavailable(f"query adapter {path}: {product}'s ranks do not agree")
        pairs[product] = (a, b)
    if not pairs:
        raise EmbeddingUnavailable(f"query adapter {path} is empty")
    return pairs
