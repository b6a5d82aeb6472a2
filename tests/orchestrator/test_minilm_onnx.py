"""The int8 onnxruntime graph of all-MiniLM-L6-v2 against the float32 NumPy encoder it is
built from: the vectors it gives, where its graph is kept, and the fall-back to NumPy."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

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


class _RunQueue:
    """Stands for Linux's run queue: how many threads are runnable, as a test sets it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, runnable: int) -> None:
        import corral.orchestrator.services._onnx_bert as onnx_bert
        import corral.orchestrator.services._spare_core as cores

        self.runnable = runnable
        monkeypatch.setattr(cores, "runnable_threads", lambda loadavg: self.runnable)
        monkeypatch.setattr(cores, "usable_cores", lambda: 2)
        monkeypatch.setattr(onnx_bert, "usable_cores", lambda: 2)
        self.wide_sessions = 0
        self.wide_runs = 0
        make = onnx_bert._wide_session

        def counted(path: Path) -> object:
            self.wide_sessions += 1
            return _CountedRuns(make(path), self)

        monkeypatch.setattr(onnx_bert, "_wide_session", counted)


class _CountedRuns:
    """An onnxruntime session that counts its runs into `queue.wide_runs`."""

    def __init__(self, session: Any, queue: _RunQueue) -> None:
        self._session = session
        self._queue = queue

    def run(self, *args: Any) -> Any:
        self._queue.wide_runs += 1
        return self._session.run(*args)


def test_a_request_gets_the_same_vector_on_two_threads_as_on_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = _RunQueue(monkeypatch, runnable=2)
    embedder = FreshMiniLM(cache=None, backend="onnx", graphs=tmp_path)
    queries = _dev_queries(60)
    busy = embedder.embed_queries(queries)
    assert queue.wide_sessions == 0  # never made while every core was busy
    queue.runnable = 1
    idle = embedder.embed_queries(queries)
    assert queue.wide_sessions == 1  # made once, on the first request with a core to spare
    assert queue.wide_runs == len(queries)  # and every request then ran on it
    assert np.array_equal(idle, busy)
    queue.runnable = 2
    embedder.embed_queries(queries)
    assert queue.wide_runs == len(queries)  # busy again: back on one thread


def test_documents_are_embedded_on_one_thread_even_with_a_core_to_spare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = _RunQueue(monkeypatch, runnable=1)
    FreshMiniLM(cache=None, backend="onnx", graphs=tmp_path).embed(_dev_queries(20))
    assert queue.wide_sessions == 0


def test_a_graph_no_longer_this_users_own_leaves_requests_on_one_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    queue = _RunQueue(monkeypatch, runnable=2)
    embedder = FreshMiniLM(cache=None, backend="onnx", graphs=tmp_path)
    first = embedder.embed_queries(["rotate the api keys"])
    (graph,) = (p for p in tmp_path.glob("*.onnx") if "-q" in p.name.split("-g")[0])
    graph.chmod(0o666)  # writable by others now: not to be trusted
    queue.runnable = 1
    with caplog.at_level(logging.WARNING):
        again = embedder.embed_queries(["rotate the api keys"])
        more = embedder.embed_queries(["rotate the api keys"])
    assert "embedding on one thread only" in caplog.text
    assert "not this user's own" in caplog.text
    assert queue.wide_sessions == 1  # one attempt, not one per request
    assert queue.wide_runs == 0
    # The one-thread session, loaded before the change, still serves.
    assert np.array_equal(first, again) and np.array_equal(first, more)
