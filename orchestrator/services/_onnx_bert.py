"""The BERT encoder of `_bert` as an int8 ONNX graph, run by onnxruntime.

A short query through the NumPy encoder reads 42 MB of float32 weights for a few rows of
arithmetic, so its time is memory traffic. This module writes the same forward pass as an ONNX
graph with the `onnx` helper API, from the weights `_bert.BertEncoder` already holds (no torch,
no download), quantizes its matrix products to int8 with onnxruntime's dynamic quantization (a
quarter of the bytes, products on the CPU's integer units), and caches the result on disk, keyed
by the SHA-256 of the weights file (and of the query adapter, for the requests' graph) and the
graph's revision. `_minilm` falls back to NumPy where onnxruntime or onnx is not installed.
The token embedding (a lookup in the 47 MB word table) runs in NumPy before the graph, so the
two graphs of one process share that table; pooling and normalising run in NumPy after it.
A request's graph runs on one thread, or on two while a second core is idle (`_spare_core`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._bert import Array, BertEncoder, TokenEmbedding, padded, pool
from ._made_once import MadeOnce
from ._private_files import open_private
from ._spare_core import spare_core, usable_cores

logger = logging.getLogger(__name__)

# Bumped when the graph below changes, so a cached graph of the old one is not loaded.
# 3: the graph starts from the embedded tokens (`TokenEmbedding`), not from their ids.
# 4: the requests' graph quantizes the first layer too (`QUERY_FLOAT_LAYERS`).
GRAPH_REVISION = 4
_OPSET = 17
_LAYER_NORM_EPS = 1e-12
# onnxruntime's own operators: fused attention and GELU, each one node in place of many.
_CONTRIB = "com.microsoft"
# Layers whose weight products stay float32 (see `build_graph`): the documents' graph keeps
# the first, the requests' graph (a search waits on it) quantizes all six.
DOCUMENT_FLOAT_LAYERS = 1
QUERY_FLOAT_LAYERS = 0
# onnxruntime (1.23) fuses each residual Add and LayerNormalization into one
# SkipLayerNormalization, whose CPU kernel is 3-4 times slower than the two it replaces.
_DISABLED_OPTIMIZERS = ["SkipLayerNormFusion"]


@functools.cache
def onnx_available() -> bool:
    """Whether onnxruntime and onnx are both installed (neither is imported here); asked once
    per process, since finding a module reads the disk and a query asks for every text."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


class OnnxBertEncoder:
    """`BertEncoder.encode`, through an int8 ONNX graph of the same weights. Given `wide` (the
    same graph on two threads, made on first use), a text goes there whenever `spare_core`
    says a second core is idle at that moment; both give the same vector, bit for bit."""

    def __init__(
        self, session: Any, embedding: TokenEmbedding, wide: Callable[[], Any] | None = None
    ) -> None:
        self._session = session
        self._embedding = embedding
        # Made on the first request with a core to spare; None for good where it failed.
        self._wide = None if wide is None else MadeOnce(wide, _one_thread_only)

    def encode(self, batch: Sequence[Sequence[int]]) -> Array:
        """Unit-length mean-pooled vectors of token-id sequences (each with [CLS] and [SEP])."""
        ids, mask = padded(batch)
        feeds = {"tokens": self._embedding(ids), "mask": mask}
        (hidden,) = self._chosen().run(None, feeds)
        return pool(np.asarray(hidden, dtype=np.float32), mask)

    def _chosen(self) -> Any:
        if self._wide is not None and spare_core():
            wide = self._wide.get()
            if wide is not None:
                return wide
        return self._session


def _one_thread_only(exc: Exception) -> None:
    # onnxruntime reports a session it cannot create with exceptions of its own.
    logger.warning("embedding on one thread only: %s", exc)


def load_onnx_encoder(
    build: Callable[[], BertEncoder],
    embedding: TokenEmbedding,
    key: str,
    folder: Path,
    float_layers: int = DOCUMENT_FLOAT_LAYERS,
    *,
    widen: bool = False,
) -> OnnxBertEncoder:
    """An onnxruntime session over the int8 graph of the encoder that `build` makes, built and
    quantized into `folder` on first use and loaded from there afterwards (`build` is not
    called then). `key` names the weights (`weights_digest`, and the adapter's for requests).
    `widen` adds a two-thread session of the graph for the moments a core is spare (the
    requests' graph, which a search waits on; an index build already spreads its texts)."""
    path = folder / f"minilm-{key}-g{GRAPH_REVISION}-int8.onnx"
    # Loaded from the bytes of a file only this user could have written: in a shared cache
    # folder another account's graph (its name is predictable) would answer every embedding.
    graph = _read_own_graph(path)
    if graph is None:
        _write_quantized(build(), path, float_layers)
        graph = _read_own_graph(path)
    if graph is None:
        raise OSError(f"{path} was replaced by a file of another user while corral wrote it")
    wide = functools.partial(_wide_session, path) if widen and usable_cores() > 1 else None
    return OnnxBertEncoder(_session(graph, threads=1), embedding, wide)


def _wide_session(path: Path) -> Any:
    # Read again, not kept from the first load: 11 MB held for a session that may never be
    # made, in a process whose cores are always busy.
    graph = _read_own_graph(path)
    if graph is None:
        raise OSError(f"{path} is gone or is not this user's own")
    return _session(graph, threads=2)


def _session(graph: bytes, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    # One thread by default, as the NumPy path: spread over more, a text's small products
    # wait on each other's hand-offs unless a core is idle (`OnnxBertEncoder`'s `wide`).
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads > 1:
        # The pool's threads spin between products (what makes two threads pay) but stop as
        # a run ends, not spinning on in a core that the rest of the process may want.
        options.add_session_config_entry("session.force_spinning_stop", "1")
    return ort.InferenceSession(
        graph,
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=_DISABLED_OPTIMIZERS,
    )


def _read_own_graph(path: Path) -> bytes | None:
    file = open_private(path)
    if file is None:
        return None
    with file:
        return file.read()


def weights_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:32]


def _write_quantized(encoder: BertEncoder, path: Path, float_layers: int) -> None:
    """The float graph, quantized to int8 into `path` atomically (a rename), so a concurrent
    reader never loads half a file."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    path.parent.mkdir(parents=True, exist_ok=True)
    model, float_products = build_graph(encoder, float_layers)
    with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
        plain = Path(scratch) / "float.onnx"
        prepared = Path(scratch) / "prepared.onnx"
        quantized = Path(scratch) / "int8.onnx"
        onnx.save(model, str(plain))
        # Shape inference, which the quantizer reads; the graph needs no other optimizing.
        quant_pre_process(
            str(plain), str(prepared), skip_optimization=True, skip_symbolic_shape=True
        )
        quantize_dynamic(
            str(prepared),
            str(quantized),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=float_products,
            # Only weights are quantized; shape inference cannot type the outputs of
            # onnxruntime's own operators, which are all float32 here.
            extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        os.chmod(quantized, 0o600)  # whatever the umask: a group-writable graph is not read
        os.replace(quantized, path)


def build_graph(
    encoder: BertEncoder, float_layers: int = DOCUMENT_FLOAT_LAYERS
) -> tuple[Any, list[str]]:
    """The float32 ONNX model of `encoder`'s layers (embedded tokens and mask in, last hidden
    states out), and the names of the weight products to keep in float32 when quantizing: the
    first `float_layers` layers'.
    Quantizing the first layer's activations cost the most accuracy (on the dev queries, the
    lowest cosine to the float vectors rose from 0.959 to 0.989 with it kept whole), for a
    sixth of the weights; but its float products are a quarter of a short query's time, so
    the requests' graph quantizes it (its tune recall@5 held)."""
    from onnx import TensorProto, helper

    g = _Graph()
    tokens, mask = "tokens", "mask"
    x = tokens
    # onnxruntime's fused attention takes the mask as 1 (a token) or 0 (padding) per position.
    padding = g.node("Cast", [mask], to=TensorProto.INT32)
    float_products: list[str] = []
    for number, layer in enumerate(encoder.layers):
        x = g.encoder_layer(x, padding, layer, encoder.heads, f"l{number}")
        if number < float_layers:
            float_products.extend(g.weight_products)
        g.weight_products.clear()
    graph = helper.make_graph(
        g.nodes,
        "minilm",
        [
            helper.make_tensor_value_info(
                tokens, TensorProto.FLOAT, ["batch", "width", encoder.hidden]
            ),
            helper.make_tensor_value_info(mask, TensorProto.FLOAT, ["batch", "width"]),
        ],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", "width", encoder.hidden])],
        g.initializers,
    )
    opsets = [helper.make_opsetid("", _OPSET), helper.make_opsetid(_CONTRIB, 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    return model, float_products


class _Graph:
    """Nodes and initializers of a graph under construction, each output a fresh name."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.weight_products: list[str] = []
        self._count = 0

    def node(self, op: str, inputs: Sequence[str], **attributes: Any) -> str:
        from onnx import helper

        self._count += 1
        output = f"{op.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op, list(inputs), [output], output, **attributes))
        return output

    def const(self, name: str, value: np.ndarray[Any, Any]) -> str:
        from onnx import numpy_helper

        self._count += 1
        unique = f"{name}_{self._count}"
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), unique))
        return unique

    def i64(self, values: Sequence[int]) -> str:
        return self.const("shape", np.asarray(values, dtype=np.int64))

    def linear(self, x: str, weight: Array, bias: Array, name: str) -> str:
        product = self.node("MatMul", [x, self.const(f"{name}_w", weight)])
        self.weight_products.append(product)
        return self.node("Add", [product, self.const(f"{name}_b", bias)])

    def layer_norm(self, x: str, weights: tuple[Array, Array], name: str) -> str:
        scale, shift = (self.const(f"{name}_ln{i}", w) for i, w in enumerate(weights))
        return self.node("LayerNormalization", [x, scale, shift], axis=-1, epsilon=_LAYER_NORM_EPS)

    def encoder_layer(self, x: str, padding: str, layer: Any, heads: int, name: str) -> str:
        from onnx import helper

        hidden = int(layer.out.shape[0])
        qkv = self.linear(x, layer.qkv, layer.qkv_bias, f"{name}_qkv")
        split = self.i64([hidden, hidden, hidden])
        parts = [f"{name}_{part}" for part in ("q", "k", "v")]
        self.nodes.append(helper.make_node("Split", [qkv, split], parts, axis=-1))
        # One fused node for the heads' scores, softmax and context; the query side is scaled
        # already, in its weights. ("" skips the optional bias input.)
        context = self.node(
            "MultiHeadAttention", [*parts, "", padding], domain=_CONTRIB, num_heads=heads, scale=1.0
        )
        attended = self.linear(context, layer.out, layer.out_bias, f"{name}_out")
        x = self.layer_norm(self.node("Add", [attended, x]), layer.norm1, f"{name}_n1")
        inner = self.gelu(self.linear(x, layer.up, layer.up_bias, f"{name}_up"))
        down = self.linear(inner, layer.down, layer.down_bias, f"{name}_down")
        return self.layer_norm(self.node("Add", [down, x]), layer.norm2, f"{name}_n2")

    def gelu(self, x: str) -> str:
        """x * Phi(x), BERT's exact GELU (with erf), as onnxruntime's one fused node."""
        return self.node("Gelu", [x], domain=_CONTRIB)
