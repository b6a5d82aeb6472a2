"""The vector cache and the int8 graph in a folder someone else can write (`CORRAL_CACHE_DIR`
pointed at a shared or world-writable one, where the file names are predictable): whatever was
planted there, vectors that would steer tool search, a graph of its own, a FIFO that would
block the reader, a symlink to elsewhere or one that leads nowhere, is never read. The cache
treats it as missing: it embeds afresh and writes its own file in its place."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import anyio
import anyio.to_thread
import numpy as np
import pytest

from corral.orchestrator.services import HashingEmbedder, VectorCache, Vectors
from corral.orchestrator.services._minilm import WEIGHTS_FILE, model_folder
from corral.orchestrator.services._onnx_bert import GRAPH_REVISION, weights_digest
from corral.orchestrator.services._vector_cache import _text_digest
from tests._minilm import FreshMiniLM

pytestmark = pytest.mark.hostile

MODEL = "model-1"
TEXTS = ["create a pull request", "post a message"]
WAIT = 20.0
OTHER_USER = 65534  # nobody
Plant = Callable[[Path, bytes], None]


def _write(path: Path, data: bytes, mode: int) -> None:
    path.write_bytes(data)
    path.chmod(mode)


def group_writable(path: Path, data: bytes) -> None:
    _write(path, data, 0o664)


def world_writable(path: Path, data: bytes) -> None:
    _write(path, data, 0o666)


def symlink_elsewhere(path: Path, data: bytes) -> None:
    target = path.parent.parent / f"elsewhere-{path.name}"
    _write(target, data, 0o600)
    path.symlink_to(target)


def another_users(path: Path, data: bytes) -> None:
    _write(path, data, 0o644)
    os.chown(path, OTHER_USER, OTHER_USER)


PLANTS: list[Plant] = [group_writable, world_writable, symlink_elsewhere]
if os.geteuid() == 0:  # only root can give a file to another user
    PLANTS.append(another_users)


def poisoned(rows: int) -> Vectors:
    return np.full((rows, HashingEmbedder().embed(["x"]).shape[1]), 7.0, dtype=np.float32)


def npy_bytes(array: np.ndarray[tuple[int, ...], np.dtype[np.generic]], folder: Path) -> bytes:
    scratch = folder.parent / "scratch.npy"
    np.save(scratch, array, allow_pickle=False)
    return scratch.read_bytes()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir()
    return cache


@pytest.mark.parametrize("plant", PLANTS)
def test_a_planted_vectors_file_under_the_exact_key_is_not_read(plant: Plant, folder: Path) -> None:
    cache = VectorCache(folder)
    path = folder / f"{cache.key(MODEL, TEXTS)}.npy"
    plant(path, npy_bytes(poisoned(len(TEXTS)), folder))

    vectors = cache.vectors(MODEL, TEXTS, HashingEmbedder().embed)

    assert np.array_equal(vectors, HashingEmbedder().embed(TEXTS))


@pytest.mark.parametrize("plant", PLANTS)
def test_planted_rows_for_known_texts_are_not_taken_into_a_new_build(
    plant: Plant, folder: Path
) -> None:
    keys = np.frombuffer(b"".join(_text_digest(MODEL, t) for t in TEXTS), dtype=np.uint8)
    plant(folder / "planted.keys", npy_bytes(keys.reshape(-1, 32), folder))
    plant(folder / "planted.npy", npy_bytes(poisoned(len(TEXTS)), folder))

    vectors = VectorCache(folder).vectors(MODEL, TEXTS, HashingEmbedder().embed)

    assert np.array_equal(vectors, HashingEmbedder().embed(TEXTS))


def test_a_dangling_symlink_in_the_folder_does_not_fail_the_build(folder: Path) -> None:
    (folder / "dangling.npy").symlink_to(folder / "nowhere.npy")
    (folder / "dangling.keys").symlink_to(folder / "nowhere.keys")

    vectors = VectorCache(folder).vectors(MODEL, TEXTS, HashingEmbedder().embed)

    assert np.array_equal(vectors, HashingEmbedder().embed(TEXTS))


@pytest.fixture
def fifo(folder: Path) -> Iterator[Path]:
    path = folder / f"{VectorCache(folder).key(MODEL, TEXTS)}.npy"
    os.mkfifo(path)
    yield path
    # A reader that did block on it (the fault under test) is let go.
    with suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.anyio
async def test_a_fifo_in_place_of_a_cache_file_does_not_block_the_reader(
    folder: Path, fifo: Path
) -> None:
    def build() -> Vectors:
        return VectorCache(folder).vectors(MODEL, TEXTS, HashingEmbedder().embed)

    with anyio.fail_after(WAIT):
        vectors = await anyio.to_thread.run_sync(build, abandon_on_cancel=True)

    assert np.array_equal(vectors, HashingEmbedder().embed(TEXTS))


@pytest.mark.timeout(240)
@pytest.mark.parametrize("plant", [group_writable, symlink_elsewhere])
def test_a_planted_graph_is_never_loaded_and_its_own_takes_its_place(
    plant: Plant, folder: Path
) -> None:
    pytest.importorskip("onnxruntime")
    digest = weights_digest(model_folder() / WEIGHTS_FILE)
    path = folder / f"minilm-{digest}-g{GRAPH_REVISION}-int8.onnx"
    planted = b"a graph of someone else's"
    plant(path, planted)
    FreshMiniLM.forget()

    embedder = FreshMiniLM(cache=None, backend="onnx", graphs=folder)
    embedder.embed(["rotate the api keys"])

    assert not path.is_symlink()
    assert path.read_bytes() != planted
    assert path.stat().st_mode & 0o777 == 0o600
    FreshMiniLM.forget()
