"""A payload reference or a run id is data from outside (a workflow history, a request): no
blob store reads or writes anything but a blob under a SHA-256 key, and deleting one run never
takes a blob that another run still references."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from corral.orchestrator.temporal import (
    BlobStore,
    FileBlobStore,
    MemoryBlobStore,
    PayloadBlobError,
    PostgresBlobStore,
)

pytestmark = [pytest.mark.anyio, pytest.mark.hostile]

FORGED_KEYS = [
    "../../../../etc/passwd",
    "../" + "a" * 61,
    "A" * 64,  # upper-case hex is another file name for the same hash
    "a" * 63,
    "a" * 65,
    "a" * 64 + "\n",
    "",
    "/" + "a" * 63,
]


@pytest.fixture(params=["memory", "folder", "postgres"])
async def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BlobStore]:
    if request.param == "postgres":
        url: str = request.getfixturevalue("postgres_url")
        yield PostgresBlobStore(url, "the test database")
    elif request.param == "folder":
        yield FileBlobStore(tmp_path / "blobs")
    else:
        yield MemoryBlobStore()


@pytest.mark.parametrize("key", FORGED_KEYS)
async def test_a_key_that_is_not_a_sha256_is_refused_for_reading(
    blobs: BlobStore, key: str, tmp_path: Path
) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text("root:x:0:0")
    with pytest.raises(PayloadBlobError, match="64 lowercase hex digits"):
        await blobs.get(key)


@pytest.mark.parametrize("key", FORGED_KEYS)
async def test_a_key_that_is_not_a_sha256_is_refused_for_writing(
    blobs: BlobStore, key: str, tmp_path: Path
) -> None:
    with pytest.raises(PayloadBlobError, match="64 lowercase hex digits"):
        await blobs.put(key, b"planted", run_id="run-a")
    planted = await anyio.to_thread.run_sync(lambda: [str(p) for p in tmp_path.rglob("passwd")])
    assert planted == []


@pytest.mark.parametrize(
    "attacker_run",
    ["run-b", "../run-a", "run-a/..", "", "run-a\x00", "%", "run-_"],
)
async def test_deleting_any_other_run_never_deletes_a_blob_a_run_still_references(
    blobs: BlobStore, attacker_run: str
) -> None:
    data = b"the victim's payload, which the attacker's run repeated word for word" * 10
    key = hashlib.sha256(data).hexdigest()
    await blobs.put(key, data, run_id="run-a")
    with contextlib.suppress(PayloadBlobError):  # a store may refuse the run id outright
        await blobs.put(key, data, run_id=attacker_run or None)
    await blobs.delete_run(attacker_run)
    assert await blobs.get(key) == data
