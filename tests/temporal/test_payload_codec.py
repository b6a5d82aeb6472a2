"""The blob-reference codec: large payloads become small references, and come back whole."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter

from corral.orchestrator.temporal import (
    BlobReferenceCodec,
    FileBlobStore,
    MemoryBlobStore,
    PayloadBlobError,
)

pytestmark = pytest.mark.anyio

THRESHOLD = 4096


def payload_of(value: object) -> Payload:
    return pydantic_data_converter.payload_converter.to_payloads([value])[0]


async def test_a_payload_over_the_threshold_crosses_as_a_reference_and_decodes_whole(
    tmp_path: Path,
) -> None:
    store = FileBlobStore(tmp_path / "blobs")
    codec = BlobReferenceCodec(store, THRESHOLD)
    big = payload_of({"output": "x" * 50_000})
    (reference,) = await codec.encode([big])
    assert reference.ByteSize() < 200
    assert reference.metadata["encoding"] == b"json/corral-blob-ref"
    body = json.loads(reference.data)
    stored = store.path_of(body["sha256"]).read_bytes()
    assert hashlib.sha256(stored).hexdigest() == body["sha256"]
    assert body["size"] == len(stored)
    # Another process on the same folder (a second worker) reads it back.
    (decoded,) = await BlobReferenceCodec(FileBlobStore(tmp_path / "blobs")).decode([reference])
    assert decoded == big
    assert pydantic_data_converter.payload_converter.from_payloads([decoded]) == [
        {"output": "x" * 50_000}
    ]


async def test_payloads_under_the_threshold_pass_untouched_and_store_nothing() -> None:
    store = MemoryBlobStore()
    codec = BlobReferenceCodec(store, THRESHOLD)
    small = [payload_of("hello"), payload_of({"n": 1}), payload_of("y" * (THRESHOLD - 100))]
    assert await codec.encode(small) == small
    assert await codec.decode(small) == small
    assert store.blobs == {}


async def test_the_same_content_is_stored_once_under_one_key() -> None:
    store = MemoryBlobStore()
    codec = BlobReferenceCodec(store, THRESHOLD)
    big = payload_of("z" * 10_000)
    first, second = await codec.encode([big, big])
    assert first == second
    assert len(store.blobs) == 1


async def test_a_missing_blob_fails_decoding_with_the_key_and_the_store(tmp_path: Path) -> None:
    store = FileBlobStore(tmp_path / "blobs")
    (reference,) = await BlobReferenceCodec(store, THRESHOLD).encode([payload_of("q" * 9000)])
    key = json.loads(reference.data)["sha256"]
    store.path_of(key).unlink()
    with pytest.raises(PayloadBlobError) as caught:
        await BlobReferenceCodec(store, THRESHOLD).decode([reference])
    message = str(caught.value)
    assert f"sha256:{key}" in message and str(tmp_path / "blobs") in message
    assert "same CORRAL_HOME" in message


async def test_a_corrupt_blob_is_refused_rather_than_decoded(tmp_path: Path) -> None:
    store = FileBlobStore(tmp_path / "blobs")
    (reference,) = await BlobReferenceCodec(store, THRESHOLD).encode([payload_of("c" * 9000)])
    store.path_of(json.loads(reference.data)["sha256"]).write_bytes(b"not the payload")
    with pytest.raises(PayloadBlobError, match="is corrupt"):
        await BlobReferenceCodec(store, THRESHOLD).decode([reference])


async def test_a_reference_naming_no_sha256_is_refused_without_touching_the_disk() -> None:
    forged = Payload(
        metadata={"encoding": b"json/corral-blob-ref"},
        data=json.dumps({"sha256": "../../etc/passwd", "size": 1}).encode(),
    )
    with pytest.raises(PayloadBlobError, match="malformed"):
        await BlobReferenceCodec(MemoryBlobStore()).decode([forged])
