"""corral's query adapter for MiniLM: requests go through it, documents never do, and a file
that is not a well-formed adapter for this model is refused, leaving the model's own vectors."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import load_file

from corral.orchestrator.services import MiniLMEmbedder
from corral.orchestrator.services._bert import BertEncoder, TokenEmbedding
from corral.orchestrator.services._embedding import EmbeddingUnavailable, QueryEmbedder
from corral.orchestrator.services._minilm import WEIGHTS_FILE, Backend, model_folder
from corral.orchestrator.services._onnx_bert import OnnxBertEncoder, load_onnx_encoder
from corral.orchestrator.services._query_adapter import ADAPTER_FILE, load_adapter, shapes_of
from corral.orchestrator.services.toolsearch import IndexedTool, ToolIndex
from tests._minilm import FreshMiniLM

PRODUCT = "encoder.layer.0.attention.self.query"


@pytest.fixture(autouse=True)
def _fresh_minilm_class() -> None:
    FreshMiniLM.forget()


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    return dict(load_file(str(model_folder() / WEIGHTS_FILE)))


def _write(path: Path, **arrays: Any) -> Path:
    np.savez(path, **arrays)
    return path


def _pair(rank: int = 2, inputs: int = 384, out: int = 384) -> dict[str, np.ndarray]:
    return {
        f"{PRODUCT}.lora_a": np.full((rank, inputs), 0.01, dtype=np.float32),
        f"{PRODUCT}.lora_b": np.full((out, rank), 0.01, dtype=np.float32),
    }


def test_corral_ships_its_query_adapter_beside_the_code_that_reads_it() -> None:
    # That it is in the wheel: tests/packaging/test_wheel.py.
    import corral.orchestrator.services as services

    assert ADAPTER_FILE.is_file()
    assert ADAPTER_FILE.stat().st_size < 1024 * 1024
    assert ADAPTER_FILE.parent == Path(services.__file__).resolve().parent


@pytest.mark.parametrize("backend", ["numpy", "onnx"])
def test_a_request_is_embedded_through_the_adapter_and_a_document_is_not(
    backend: Backend,
) -> None:
    embedder = MiniLMEmbedder(cache=None, backend=backend)
    text = "we need more replicas of the web app"
    document, query = embedder.embed([text])[0], embedder.embed_queries([text])[0]
    assert isinstance(embedder, QueryEmbedder)
    assert float(np.linalg.norm(query)) == pytest.approx(1.0, abs=1e-5)
    # The same model, moved: close to the document vector of its own text, but not it.
    assert 0.5 < float(document @ query) < 0.999
    assert np.array_equal(embedder.embed([text])[0], document)


def test_the_adapter_moves_a_request_towards_the_tool_that_does_it() -> None:
    embedder = MiniLMEmbedder(cache=None, backend="onnx")
    request = "we need more replicas of the web app"
    tools = embedder.embed(
        [
            "kubernetes: scale deployment: Scale a deployment to a number of replicas",
            "kubernetes: get pod logs: Read the logs of a pod",
        ]
    )
    plain, adapted = embedder.embed([request])[0], embedder.embed_queries([request])[0]
    assert float(tools[0] @ adapted) > float(tools[0] @ plain)


def test_merging_adds_b_times_a_to_the_named_product_and_leaves_the_base_weights(
    tmp_path: Path, weights: dict[str, np.ndarray]
) -> None:
    before = weights[f"{PRODUCT}.weight"].copy()
    merged = load_adapter(shapes_of(weights), _write(tmp_path / "a.npz", **_pair())).applied_to(
        weights
    )
    assert np.allclose(merged[f"{PRODUCT}.weight"], before + 0.0002, atol=1e-6)
    assert np.array_equal(weights[f"{PRODUCT}.weight"], before)
    untouched = "encoder.layer.1.attention.self.query.weight"
    assert merged[untouched] is weights[untouched]


@pytest.mark.parametrize(
    ("arrays", "says"),
    [
        ({"encoder.layer.0.attention.self.query.lora_c": np.zeros((2, 2))}, "unexpected array"),
        ({"embeddings.word_embeddings.weight": np.zeros((2, 2))}, "unexpected array"),
        ({f"{PRODUCT}.lora_a": np.zeros((2, 384), dtype=np.float32)}, "lacks one of A and B"),
        (_pair(inputs=100), "is 384x384"),
        (_pair(out=1536), "is 384x384"),
        ({**_pair(), f"{PRODUCT}.lora_b": np.zeros((384, 3), dtype=np.float32)}, "ranks"),
        ({**_pair(), f"{PRODUCT}.lora_a": np.full((2, 384), np.nan, dtype=np.float32)}, "finite"),
        ({**_pair(), f"{PRODUCT}.lora_a": np.zeros((2, 384), dtype=np.int64)}, "finite"),
        ({**_pair(), f"{PRODUCT}.lora_a": np.zeros(384, dtype=np.float32)}, "finite"),
        (
            {
                "encoder.layer.9.attention.self.query.lora_a": np.zeros((2, 384), dtype=np.float32),
                "encoder.layer.9.attention.self.query.lora_b": np.zeros((384, 2), dtype=np.float32),
            },
            "has no encoder.layer.9",
        ),
        (_pair(rank=65), "ranks"),
        ({}, "empty"),
    ],
)
def test_an_adapter_that_does_not_fit_the_model_is_refused_with_what_is_wrong(
    tmp_path: Path, weights: dict[str, np.ndarray], arrays: dict[str, np.ndarray], says: str
) -> None:
    with pytest.raises(EmbeddingUnavailable, match=says):
        load_adapter(shapes_of(weights), _write(tmp_path / "bad.npz", **arrays))


def test_an_adapter_file_holding_pickled_objects_is_refused_unread(
    tmp_path: Path, weights: dict[str, np.ndarray]
) -> None:
    path = tmp_path / "pickled.npz"
    _write(path, **{f"{PRODUCT}.lora_a": np.array([object()], dtype=object)})
    with pytest.raises(EmbeddingUnavailable, match="cannot read"):
        load_adapter(shapes_of(weights), path)


def test_a_file_that_is_no_archive_is_refused(
    tmp_path: Path, weights: dict[str, np.ndarray]
) -> None:
    path = tmp_path / "garbage.npz"
    path.write_bytes(b"not a zip archive at all")
    with pytest.raises(EmbeddingUnavailable, match="cannot read"):
        load_adapter(shapes_of(weights), path)


def test_without_a_usable_adapter_requests_get_the_models_own_vectors_and_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import corral.orchestrator.services._minilm as minilm

    monkeypatch.setattr(minilm, "ADAPTER_FILE", tmp_path / "missing.npz")
    embedder = FreshMiniLM(cache=None, backend="numpy")
    with caplog.at_level(logging.WARNING):
        query = embedder.embed_queries(["rotate the api keys"])[0]
    assert "own query vectors" in caplog.text
    assert np.array_equal(query, embedder.embed(["rotate the api keys"])[0])
    # One copy of the weights serves both.
    model = FreshMiniLM._models["numpy"]
    assert model.encoder("queries") is model.encoder("documents")


def test_the_query_graph_is_kept_apart_from_the_document_graph(tmp_path: Path) -> None:
    embedder = FreshMiniLM(cache=None, backend="onnx", graphs=tmp_path)
    embedder.embed(["rotate the api keys"])
    # A process that only embeds documents never builds or loads the requests' graph.
    assert [p.name for p in tmp_path.glob("*.onnx") if "-q" in p.name.split("-g")[0]] == []
    embedder.embed_queries(["rotate the api keys"])
    names = sorted(p.name for p in tmp_path.glob("*.onnx"))
    assert len(names) == 2
    assert sum("-q" in name.split("-g")[0] for name in names) == 1
    # The 47 MB word table is not in either graph: both read the one copy in NumPy.
    model = FreshMiniLM._models["onnx"]
    documents, queries = model.encoder("documents"), model.encoder("queries")
    assert isinstance(documents, OnnxBertEncoder) and isinstance(queries, OnnxBertEncoder)
    assert queries is not documents
    assert queries._embedding is documents._embedding
    assert all(p.stat().st_size < 32 * 1024 * 1024 for p in tmp_path.glob("*.onnx"))


def test_a_query_graph_that_cannot_be_built_leaves_requests_on_the_document_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = FreshMiniLM(cache=None, backend="onnx", graphs=tmp_path)
    document = embedder.embed(["rotate the api keys"])[0]

    def refusing_the_query_graph(key: str, float_layers: int) -> None:
        if "-q" in key:
            raise OSError("disk full")

    _before_each_graph_load(monkeypatch, refusing_the_query_graph)
    with caplog.at_level(logging.WARNING):
        query = embedder.embed_queries(["rotate the api keys"])[0]
    assert "disk full" in caplog.text and "own query vectors" in caplog.text
    assert np.array_equal(query, document)
    # Documents stay on the int8 graph: the failure touched requests only.
    assert embedder.backend == "onnx"


def test_the_requests_graph_quantizes_every_layer_and_the_documents_keep_the_first_float(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: dict[str, int] = {}

    def recording(key: str, float_layers: int) -> None:
        built["requests" if "-q" in key else "documents"] = float_layers

    _before_each_graph_load(monkeypatch, recording)
    embedder = FreshMiniLM(cache=None, backend="onnx", graphs=tmp_path)
    embedder.embed(["rotate the api keys"])
    embedder.embed_queries(["rotate the api keys"])

    assert built == {"documents": 1, "requests": 0}


def test_tool_search_ranks_by_the_requests_adapted_vector() -> None:
    tools = [
        IndexedTool(
            "mcp__k8s__scale", "k8s", "scale", "Set the number of replicas of a deployment"
        ),
        IndexedTool("mcp__k8s__logs", "k8s", "logs", "Read the logs of a pod"),
    ]
    index = ToolIndex(tools, MiniLMEmbedder(cache=None, backend="onnx"))
    (best, *_) = index.search("we need more copies of the web app running", 2, ranker="embedding")
    assert best.name == "mcp__k8s__scale"


def _before_each_graph_load(
    monkeypatch: pytest.MonkeyPatch, before: Callable[[str, int], None]
) -> None:
    """Calls `before(key, float_layers)` ahead of each ONNX graph `_minilm` loads or builds
    (the requests' graph's key holds "-q"); an exception it raises is the load's."""
    import corral.orchestrator.services._minilm as minilm

    def wrapped(
        build: Callable[[], BertEncoder],
        embedding: TokenEmbedding,
        key: str,
        folder: Path,
        float_layers: int,
        *,
        widen: bool = False,
    ) -> OnnxBertEncoder:
        before(key, float_layers)
        return load_onnx_encoder(build, embedding, key, folder, float_layers, widen=widen)

    monkeypatch.setattr(minilm, "load_onnx_encoder", wrapped)
