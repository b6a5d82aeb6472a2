"""The int8 onnxruntime graph of all-MiniLM-L6-v2 against the float32 NumPy encoder it is
built from: the vectors it gives, where its graph is kept, and the fall-back to NumPy."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from corral.orchestrator.services import MiniLMEmbedder
from corral.orchestrator.services._onnx_bert import GRAPH_REVISION
from tests._minilm import FreshMiniLM

DEV_SET = Path(__file__).parents[2] / "benchmarks" / "data" / "retrieval"


@pytest.fixture(autouse=True)
def _fresh_minilm_class() -> None:
    FreshMiniLM.forget()


def _dev_queries(count: int) -> list[str]:
    lines = (DEV_SET / "tool_queries.jsonl").read_text(encoding="utf-8").splitlines()
    lines += (DEV_SET / "skill_queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines[:: max(1, len(lines) // count)]]


def test_the_int8_graph_gives_the_numpy_vectors_within_a_cosine_of_0_99() -> None:
    queries = _dev_queries(120)
    exact = MiniLMEmbedder(cache=None, backend="numpy").embed(queries)
    quantized = MiniLMEmbedder(cache=None, backend="onnx").embed(queries)
    cosines = (exact * quantized).sum(axis=1)
    assert float(cosines.mean()) >= 0.99
    assert float(cosines.min()) >= 0.98


def test_a_text_gets_the_same_int8_vector_alone_or_among_others() -> None:
    # Its vector is cached under its text alone, so no batch-mate may change it.
    # Twenty texts: an index build's many texts are embedded on several threads.
    minilm = MiniLMEmbedder(cache=None, backend="onnx")
    texts = ["hi", "open the page in the browser and take a screenshot of it", *_dev_queries(18)]
    alone = np.stack([minilm.embed([text])[0] for text in texts])
    assert np.array_equal(minilm.embed(texts), alone)


def test_the_graph_is_built_once_and_named_by_the_weights_and_its_revision(
    tmp_path: Path,
) -> None:
    first = FreshMiniLM(cache=None, backend="onnx", graphs=tmp_path)
    vector = first.embed(["rotate the api keys"])
    # The documents' graph; the requests' is beside it (tests/orchestrator/test_query_adapter.py).
    (graph,) = (p for p in tmp_path.glob("*.onnx") if "-q" not in p.name)
    assert graph.name.startswith("minilm-") and graph.name.endswith(f"-g{GRAPH_REVISION}-int8.onnx")
    built = graph.stat().st_mtime_ns
    FreshMiniLM.forget()
    again = FreshMiniLM(cache=None, backend="onnx", graphs=tmp_path).embed(["rotate the api keys"])
    assert graph.stat().st_mtime_ns == built
    assert np.array_equal(vector, again)


def test_a_graph_that_cannot_be_written_leaves_numpy_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the graph folder should be")
    embedder = FreshMiniLM(cache=None, graphs=blocked)
    with caplog.at_level(logging.WARNING):
        vector = embedder.embed(["hello world"])[0]
    assert embedder.backend == "numpy"
    assert embedder.model_id.endswith("-numpy1")
    assert "embedding with NumPy instead" in caplog.text
    assert np.allclose(
        vector, MiniLMEmbedder(cache=None, backend="numpy").embed(["hello world"])[0]
    )


def test_the_model_id_names_the_backend_so_cached_vectors_never_cross() -> None:
    numpy_id = MiniLMEmbedder(cache=None, backend="numpy").model_id
    onnx_id = MiniLMEmbedder(cache=None, backend="onnx").model_id
    assert numpy_id != onnx_id
    assert onnx_id.endswith(f"-onnx-int8-g{GRAPH_REVISION}")


def test_onnx_is_the_default_backend_where_onnxruntime_is_installed() -> None:
    assert MiniLMEmbedder(cache=None).backend == "onnx"
