"""A BERT sentence encoder run in NumPy: token ids in, mean-pooled unit vectors out.

This is the forward pass of a small BERT (all-MiniLM-L6-v2: 6 layers, 12 heads of 32, a GELU
feed-forward of 1536) from its safetensors weights, so corral needs no torch. Tokenising is
`_minilm`'s; this module only does arithmetic, in float32 throughout.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float32]
_Getter = Callable[[str], Array]
_LAYER_NORM_EPS = 1e-12
# A score that softmax turns into zero weight: a padded position gets no attention.
_MASKED = -1e9


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's weights, laid out for `x @ w`: query, key and value in one matrix,
    the query side already divided by sqrt(head size)."""

    qkv: Array
    qkv_bias: Array
    out: Array
    out_bias: Array
    norm1: tuple[Array, Array]
    up: Array
    up_bias: Array
    down: Array
    down_bias: Array
    norm2: tuple[Array, Array]


@dataclass(frozen=True)
class TokenEmbedding:
    """The encoder's first step: each token's word vector plus its position's (and segment
    0's), layer-normalised. The int8 graphs start after it, so both of them (the documents'
    and the requests') share this one copy of the 30,522-word table."""

    words: Array
    positions: Array
    norm: tuple[Array, Array]

    @classmethod
    def of(cls, weights: Mapping[str, npt.NDArray[np.generic]]) -> TokenEmbedding:
        get = _getter(weights)
        return cls(
            get("embeddings.word_embeddings.weight"),
            # Every sentence is one segment, so segment 0's vector is part of each position's.
            get("embeddings.position_embeddings.weight")
            + get("embeddings.token_type_embeddings.weight")[0],
            (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias")),
        )

    def __call__(self, ids: npt.NDArray[np.int64]) -> Array:
        return _layer_norm(self.words[ids] + self.positions[: ids.shape[1]], self.norm)


class BertEncoder:
    """The encoder of a BERT checkpoint (Hugging Face names), for sentence embeddings."""

    def __init__(
        self,
        weights: Mapping[str, npt.NDArray[np.generic]],
        heads: int,
        embedding: TokenEmbedding | None = None,
    ) -> None:
        """`embedding`, where given, stands for the weights' own token embedding: another
        encoder's copy of the same table, shared rather than held twice."""
        get = _getter(weights)
        self.heads = heads
        self.embedding = TokenEmbedding.of(weights) if embedding is None else embedding
        self.hidden = self.embedding.words.shape[1]
        count = 1 + max(int(k.split(".")[2]) for k in weights if k.startswith("encoder.layer."))
        head_size = self.hidden // heads
        self.layers = [_layer(get, f"encoder.layer.{i}.", head_size) for i in range(count)]

    @property
    def max_tokens(self) -> int:
        return int(self.embedding.positions.shape[0])

    def encode(self, batch: Sequence[Sequence[int]]) -> Array:
        """Unit-length mean-pooled vectors of token-id sequences (each with [CLS] and [SEP])."""
        ids, mask = padded(batch)
        x = self.embedding(ids)
        bias = ((1.0 - mask) * _MASKED)[:, None, None, :]
        for layer in self.layers:
            x = self._layer(x, layer, bias)
        return pool(x, mask)

    def _layer(self, x: Array, layer: _Layer, bias: Array) -> Array:
        batch, width, hidden = x.shape
        qkv = (x @ layer.qkv + layer.qkv_bias).reshape(batch, width, 3, self.heads, -1)
        query, key, value = qkv.transpose(2, 0, 3, 1, 4)
        scores = query @ key.transpose(0, 1, 3, 2) + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
        x = _layer_norm(context @ layer.out + layer.out_bias + x, layer.norm1)
        inner = _gelu(x @ layer.up + layer.up_bias)
        return _layer_norm(inner @ layer.down + layer.down_bias + x, layer.norm2)


def padded(batch: Sequence[Sequence[int]]) -> tuple[npt.NDArray[np.int64], Array]:
    """Token ids padded with 0 to the batch's longest, and a mask of 1 on the real tokens."""
    width = max(len(ids) for ids in batch)
    ids = np.zeros((len(batch), width), dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.float32)
    for row, sequence in enumerate(batch):
        ids[row, : len(sequence)] = sequence
        mask[row, : len(sequence)] = 1.0
    return ids, mask


def pool(hidden: Array, mask: Array) -> Array:
    """The mean of each row's real positions (`mask` 1), scaled to unit length."""
    pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)


def _getter(weights: Mapping[str, npt.NDArray[np.generic]]) -> _Getter:
    def get(name: str) -> Array:
        return np.ascontiguousarray(weights[name], dtype=np.float32)

    return get


def _layer(get: _Getter, prefix: str, head_size: int) -> _Layer:
    scale = 1.0 / math.sqrt(head_size)

    def linear(name: str) -> tuple[Array, Array]:
        # Checkpoints store (out, in); `x @ w` wants (in, out), contiguous for BLAS.
        return np.ascontiguousarray(get(f"{prefix}{name}.weight").T), get(f"{prefix}{name}.bias")

    (q, qb), (k, kb), (v, vb) = (linear(f"attention.self.{n}") for n in ("query", "key", "value"))
    out, out_bias = linear("attention.output.dense")
    up, up_bias = linear("intermediate.dense")
    down, down_bias = linear("output.dense")
    return _Layer(
        qkv=np.ascontiguousarray(np.concatenate([q * scale, k, v], axis=1)),
        qkv_bias=np.concatenate([qb * scale, kb, vb]),
        out=out,
        out_bias=out_bias,
        norm1=_norm(get, f"{prefix}attention.output.LayerNorm"),
        up=up,
        up_bias=up_bias,
        down=down,
        down_bias=down_bias,
        norm2=_norm(get, f"{prefix}output.LayerNorm"),
    )


def _norm(get: _Getter, prefix: str) -> tuple[Array, Array]:
    return get(f"{prefix}.weight"), get(f"{prefix}.bias")


def _layer_norm(x: Array, weights: tuple[Array, Array]) -> Array:
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    normed: Array = centred / np.sqrt(variance + _LAYER_NORM_EPS) * weights[0] + weights[1]
    return normed


def _gelu(x: Array) -> Array:
    """BERT's exact GELU, x * Phi(x), with erf from Abramowitz and Stegun 7.1.26 (absolute
    error under 1.5e-7, below float32's resolution here); NumPy has no erf of its own."""
    z = np.abs(x) * (1.0 / math.sqrt(2.0))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = (((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t
    poly = (poly + 0.254829592) * t
    erf = np.copysign(1.0 - poly * np.exp(-z * z), x)
    return np.asarray(0.5 * x * (1.0 + erf), dtype=np.float32)
