"""Connecting to a Temporal server, failing at once with a clear message when none answers.

Every client and worker of corral connects here, with the pydantic data converter (corral's
workflow arguments are pydantic models) wrapped in the blob-reference codec (large payloads
travel by reference), optionally corral's tracing interceptor, and a short deadline: a wrong
address or a stopped server is a `TemporalUnavailable` naming the address, never a hang.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

import anyio
from opentelemetry.trace import TracerProvider
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter

from corral.agents import corral_home
from corral.agents._store import redact_url

from ._blobs import BlobStore, FileBlobStore
from ._blobs_postgres import PostgresBlobStore
from ._codec import BLOBS_DIR, DEFAULT_PAYLOAD_THRESHOLD, BlobReferenceCodec
from ._errors import TemporalUnavailable
from ._tracing import CorralTracingInterceptor
from ._wire import SHARED_QUEUE

CONNECT_TIMEOUT = 5.0
DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class TemporalSettings:
    """Where the Temporal server is, which queue corral's workflows use there, and where
    payloads of `payload_threshold_bytes` or more are kept (`blob_dir`, by default
    `$CORRAL_HOME/blobs`: every client and worker of a namespace must share it)."""

    address: str
    namespace: str = DEFAULT_NAMESPACE
    task_queue: str = SHARED_QUEUE
    connect_timeout: float = CONNECT_TIMEOUT
    blob_dir: Path | None = None
    payload_threshold_bytes: int = DEFAULT_PAYLOAD_THRESHOLD
    journal_url: str | None = None
    """The shared PostgreSQL journal (`[journal] url`): payloads by reference are kept in its
    database instead of `blob_dir`, so every machine reads them."""


def blob_store(settings: TemporalSettings) -> BlobStore:
    """Where `settings` keep payloads by reference: the journal's database, else a folder."""
    if settings.journal_url is not None:
        return PostgresBlobStore(settings.journal_url, redact_url(settings.journal_url))
    return FileBlobStore(settings.blob_dir or corral_home(os.environ) / BLOBS_DIR)


def data_converter(settings: TemporalSettings) -> DataConverter:
    """The pydantic converter with `settings`' blob-reference codec."""
    codec = BlobReferenceCodec(blob_store(settings), settings.payload_threshold_bytes)
    return dataclasses.replace(pydantic_data_converter, payload_codec=codec)


async def connect(
    settings: TemporalSettings, *, tracer_provider: TracerProvider | None = None
) -> Client:
    """A client of the server at `settings.address`; raises `TemporalUnavailable` within
    `connect_timeout` seconds when it cannot be reached. With `tracer_provider`, workflows it
    starts (and workers built on it) continue the caller's current trace."""
    interceptors = [] if tracer_provider is None else [CorralTracingInterceptor(tracer_provider)]
    try:
        with anyio.fail_after(settings.connect_timeout):
            return await Client.connect(
                settings.address,
                namespace=settings.namespace,
                data_converter=data_converter(settings),
                interceptors=interceptors,
            )
    except TimeoutError as exc:
        raise _unavailable(settings, f"no answer within {settings.connect_timeout:g} s") from exc
    except (RuntimeError, OSError, ValueError) as exc:
        raise _unavailable(settings, str(exc)) from exc


def _unavailable(settings: TemporalSettings, why: str) -> TemporalUnavailable:
    return TemporalUnavailable(
        f"cannot reach the Temporal server at {settings.address} "
        f"(namespace {settings.namespace}): {why}. Start the server (for a local one: "
        "`temporal server start-dev`) or fix --temporal-address, or run with --executor local"
    )
