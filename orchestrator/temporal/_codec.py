"""Payloads above a threshold travel by reference: stored in a content-addressed blob store,
with only a small reference crossing Temporal.

`BlobReferenceCodec` is the data converter's payload codec on every corral client and worker.
A payload of `threshold` bytes or more is serialized whole (metadata and data), stored under
its SHA-256, and replaced by a reference payload of its own encoding; decoding fetches and
checks it. The store is a `BlobStore` seam: `FileBlobStore` (a folder, by default
`$CORRAL_HOME/blobs`, shared by the workers and clients of one machine, or of many machines
when it is on a shared filesystem) and `MemoryBlobStore`, its in-memory twin. Blobs are never
deleted here: they are as durable as the histories that name them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import anyio.to_thread
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from ._errors import PayloadBlobError

DEFAULT_PAYLOAD_THRESHOLD = 256 * 1024
"""Bytes from which a payload goes by reference: Temporal's SDK warns at 512 KiB and fails
at 2 MiB per payload; its own external storage offloads from 256 KiB, as here."""
BLOBS_DIR = "blobs"
REFERENCE_ENCODING = b"json/corral-blob-ref"
_ENCODING = "encoding"
_SHA256 = re.compile(r"[0-9a-f]{64}")


class BlobStore(Protocol):
    """Bytes kept under their SHA-256 (hex); `where` names the store in messages."""

    @property
    def where(self) -> str: ...

    async def put(self, key: str, data: bytes) -> None: ...

    async def get(self, key: str) -> bytes | None:
        """The bytes stored under `key`, or None when there are none."""
        ...


@dataclass(frozen=True)
class FileBlobStore:
    """Blobs as files `<root>/sha256/<first two hex digits>/<hex>`, written atomically, so
    writers on several processes (or machines sharing the folder) never see half a blob."""

    root: Path

    @property
    def where(self) -> str:
        return str(self.root)

    def path_of(self, key: str) -> Path:
        return self.root / "sha256" / key[:2] / key

    async def put(self, key: str, data: bytes) -> None:
        await anyio.to_thread.run_sync(self._put, key, data)

    async def get(self, key: str) -> bytes | None:
        return await anyio.to_thread.run_sync(self._get, key)

    def _put(self, key: str, data: bytes) -> None:
        path = self.path_of(key)
        if path.exists():  # same key, same bytes: content-addressed
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:12]}-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def _get(self, key: str) -> bytes | None:
        try:
            return self.path_of(key).read_bytes()
        except FileNotFoundError:
            return None


@dataclass
class MemoryBlobStore:
    """The in-memory twin of `FileBlobStore`, for tests and single-process use."""

    blobs: dict[str, bytes] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return "the in-memory blob store"

    async def put(self, key: str, data: bytes) -> None:
        self.blobs.setdefault(key, data)

    async def get(self, key: str) -> bytes | None:
        return self.blobs.get(key)


class BlobReferenceCodec(PayloadCodec):
    """Stores payloads of `threshold` bytes or more in `store`; the rest pass unchanged."""

    def __init__(self, store: BlobStore, threshold: int = DEFAULT_PAYLOAD_THRESHOLD) -> None:
        if threshold < 1:
            raise ValueError(f"the payload threshold must be at least 1 byte, not {threshold}")
        self.store = store
        self.threshold = threshold

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self._encode_one(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self._decode_one(p) for p in payloads]

    async def _encode_one(self, payload: Payload) -> Payload:
        if payload.ByteSize() < self.threshold or is_reference(payload):
            return payload
        data = payload.SerializeToString(deterministic=True)
        key = hashlib.sha256(data).hexdigest()
        await self.store.put(key, data)
        body = json.dumps({"sha256": key, "size": len(data)}, separators=(",", ":"))
        return Payload(metadata={_ENCODING: REFERENCE_ENCODING}, data=body.encode())

    async def _decode_one(self, payload: Payload) -> Payload:
        if not is_reference(payload):
            return payload
        key, size = _reference_of(payload)
        data = await self.store.get(key)
        if data is None:
            raise PayloadBlobError(
                f"the payload stored by reference as sha256:{key} ({size} bytes) is not in "
                f"{self.store.where}. Every corral worker and client of this Temporal namespace "
                "must share one blob store: run them with the same CORRAL_HOME, on machines "
                "that mount its blobs folder from shared storage"
            )
        if hashlib.sha256(data).hexdigest() != key:
            raise PayloadBlobError(
                f"the blob sha256:{key} in {self.store.where} is corrupt (its content has "
                "another hash); restore it from a copy of the blob store"
            )
        stored = Payload()
        stored.ParseFromString(data)
        return stored


def is_reference(payload: Payload) -> bool:
    return payload.metadata.get(_ENCODING) == REFERENCE_ENCODING


def _reference_of(payload: Payload) -> tuple[str, int]:
    try:
        body: Mapping[str, object] = json.loads(payload.data)
        key, size = body["sha256"], body["size"]
    except (ValueError, KeyError, TypeError) as exc:
        raise PayloadBlobError(
            f"a payload reference is malformed ({payload.data[:80]!r}); it was not written by "
            "corral's codec"
        ) from exc
    if not isinstance(key, str) or not _SHA256.fullmatch(key) or not isinstance(size, int):
        raise PayloadBlobError(f"a payload reference is malformed ({payload.data[:80]!r})")
    return key, size
