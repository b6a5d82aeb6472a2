"""Payloads above a threshold travel by reference: stored in a content-addressed blob store,
with only a small reference crossing Temporal.

`BlobReferenceCodec` is the data converter's payload codec on every corral client and worker.
A payload of `threshold` bytes or more is serialized whole (metadata and data), stored under
its SHA-256, and replaced by a reference payload of its own encoding; decoding fetches and
checks it. The store is a `BlobStore` (`_blobs`): the journal's PostgreSQL database when the
journal is there, else a folder (by default `$CORRAL_HOME/blobs`). Temporal tells the codec
which workflow a payload belongs to, so each blob is referenced by its run and deleted with it
(`BlobStore.delete_run`), never before.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Self

from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec, SerializationContext, WithSerializationContext

from ._blobs import BlobStore, run_of_workflow
from ._errors import PayloadBlobError

DEFAULT_PAYLOAD_THRESHOLD = 256 * 1024
"""Bytes from which a payload goes by reference: Temporal's SDK warns at 512 KiB and fails
at 2 MiB per payload; its own external storage offloads from 256 KiB, as here."""
BLOBS_DIR = "blobs"
REFERENCE_ENCODING = b"json/corral-blob-ref"
_ENCODING = "encoding"
_SHA256 = re.compile(r"[0-9a-f]{64}")


class BlobReferenceCodec(PayloadCodec, WithSerializationContext):
    """Stores payloads of `threshold` bytes or more in `store`, referenced by `run_id`; the
    rest pass unchanged. Temporal hands each conversion a copy made by `with_context`, whose
    `run_id` is the run of the workflow the payload belongs to."""

    def __init__(
        self,
        store: BlobStore,
        threshold: int = DEFAULT_PAYLOAD_THRESHOLD,
        *,
        run_id: str | None = None,
    ) -> None:
        if threshold < 1:
            raise ValueError(f"the payload threshold must be at least 1 byte, not {threshold}")
        self.store = store
        self.threshold = threshold
        self.run_id = run_id

    def with_context(self, context: SerializationContext) -> Self:
        workflow_id: str | None = getattr(context, "workflow_id", None)
        run_id = None if workflow_id is None else run_of_workflow(workflow_id)
        if run_id == self.run_id:
            return self
        return type(self)(self.store, self.threshold, run_id=run_id)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self._encode_one(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [await self._decode_one(p) for p in payloads]

    async def _encode_one(self, payload: Payload) -> Payload:
        if payload.ByteSize() < self.threshold or is_reference(payload):
            return payload
        data = payload.SerializeToString(deterministic=True)
        key = hashlib.sha256(data).hexdigest()
        await self.store.put(key, data, run_id=self.run_id)
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
                "must share one blob store: point them all at the same PostgreSQL journal "
                "([journal] url or CORRAL_JOURNAL_URL), or run them with the same CORRAL_HOME "
                "on machines that mount its blobs folder from shared storage; a blob is also "
                "gone once its run was deleted"
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
