"""Every blob store keeps blobs by content, references them by run, and deletes them with their
last run; the codec references each payload's blob by the run of the workflow it belongs to."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import anyio
import pytest
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import ActivitySerializationContext, WorkflowSerializationContext

from corral.agents import CorralConfig
from corral.orchestrator.runs import resolve_executor_settings
from corral.orchestrator.temporal import (
    BlobReferenceCodec,
    BlobStore,
    FileBlobStore,
    MemoryBlobStore,
    PayloadBlobError,
    PostgresBlobStore,
    TemporalSettings,
    run_of_workflow,
)
from corral.orchestrator.temporal._connect import blob_store
from corral.orchestrator.temporal._runner import TemporalRunner

pytestmark = pytest.mark.anyio

THRESHOLD = 4096

StoreMaker = Callable[[Path], BlobStore]


def _file_store(tmp_path: Path) -> BlobStore:
    return FileBlobStore(tmp_path / "blobs")


def _memory_store(tmp_path: Path) -> BlobStore:
    return MemoryBlobStore()


@pytest.fixture(params=["memory", "folder", "postgres"])
async def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BlobStore]:
    if request.param == "postgres":
        url: str = request.getfixturevalue("postgres_url")
        yield PostgresBlobStore(url, "the test database")
        return
    makers: dict[str, StoreMaker] = {"memory": _memory_store, "folder": _file_store}
    yield makers[request.param](tmp_path)


def key_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_a_blob_put_is_read_back_by_its_key(blobs: BlobStore) -> None:
    data = b"payload" * 100
    await blobs.put(key_of(data), data, run_id="run-a")
    assert await blobs.get(key_of(data)) == data
    assert await blobs.get(key_of(b"never stored")) is None


async def test_deleting_a_run_deletes_its_blobs_and_leaves_other_runs_blobs(
    blobs: BlobStore,
) -> None:
    mine, theirs = b"mine" * 50, b"theirs" * 50
    await blobs.put(key_of(mine), mine, run_id="run-a")
    await blobs.put(key_of(theirs), theirs, run_id="run-b")
    assert await blobs.delete_run("run-a") == 1
    assert await blobs.get(key_of(mine)) is None
    assert await blobs.get(key_of(theirs)) == theirs


async def test_a_blob_two_runs_share_lives_until_both_are_deleted(blobs: BlobStore) -> None:
    shared = b"the same tool output" * 40
    await blobs.put(key_of(shared), shared, run_id="run-a")
    await blobs.put(key_of(shared), shared, run_id="run-b")
    assert await blobs.delete_run("run-a") == 0
    assert await blobs.get(key_of(shared)) == shared
    assert await blobs.delete_run("run-b") == 1
    assert await blobs.get(key_of(shared)) is None


async def test_deleting_a_run_twice_or_one_without_blobs_is_harmless(blobs: BlobStore) -> None:
    data = b"x" * 300
    await blobs.put(key_of(data), data, run_id="run-a")
    assert await blobs.delete_run("run-a") == 1
    assert await blobs.delete_run("run-a") == 0
    assert await blobs.delete_run("run-never") == 0


async def test_a_blob_written_outside_any_run_is_never_deleted(blobs: BlobStore) -> None:
    data = b"no workflow" * 30
    await blobs.put(key_of(data), data)
    await blobs.put(key_of(data), data, run_id="run-a")
    assert await blobs.delete_run("run-a") == 0
    assert await blobs.get(key_of(data)) == data


@pytest.mark.parametrize(
    ("workflow_id", "run_id"),
    [
        ("run-0123abcd4567", "run-0123abcd4567"),
        ("run-0123abcd4567.item-12", "run-0123abcd4567"),
        ("nightly.review.v2.agent-0123456789ab", "nightly.review.v2"),
        ("nightly.review.v2", "nightly.review.v2"),
        ("run-1.agent-not-an-agent", "run-1.agent-not-an-agent"),
    ],
)
def test_a_child_workflow_belongs_to_the_run_its_id_starts_with(
    workflow_id: str, run_id: str
) -> None:
    assert run_of_workflow(workflow_id) == run_id


def payload_of(value: object) -> Payload:
    return pydantic_data_converter.payload_converter.to_payloads([value])[0]


async def test_the_codec_references_a_blob_by_the_run_of_the_payloads_workflow() -> None:
    store = MemoryBlobStore()
    codec = BlobReferenceCodec(store, THRESHOLD)
    workflow = WorkflowSerializationContext(namespace="default", workflow_id="run-7.item-3")
    activity = ActivitySerializationContext(
        namespace="default",
        activity_id="1",
        activity_type="model_turn",
        activity_task_queue="corral",
        workflow_id="run-8.agent-0123456789ab",
        workflow_type="AgentWorkflow",
        is_local=False,
    )
    (first,) = await codec.with_context(workflow).encode([payload_of("a" * 9000)])
    (second,) = await codec.with_context(activity).encode([payload_of("b" * 9000)])
    assert store.refs == {
        "run-7": {json.loads(first.data)["sha256"]},
        "run-8": {json.loads(second.data)["sha256"]},
    }
    await store.delete_run("run-7")
    with pytest.raises(PayloadBlobError, match="deleted"):
        await codec.decode([first])
    assert await codec.decode([second]) == [payload_of("b" * 9000)]


async def test_a_delete_racing_a_put_of_the_same_blob_by_another_run_never_loses_it(
    blobs: BlobStore,
) -> None:
    for round_ in range(10):
        data = f"round {round_} ".encode() * 40
        key = key_of(data)
        await blobs.put(key, data, run_id="run-a")
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(blobs.delete_run, "run-a")
                tg.start_soon(partial(blobs.put, key, data, run_id="run-b"))
        assert await blobs.get(key) == data, f"round {round_}: run-b's blob was deleted"
        assert await blobs.delete_run("run-b") == 1


def test_with_a_shared_journal_clients_and_workers_keep_blobs_in_its_database(
    tmp_path: Path,
) -> None:
    url = "postgresql://corral:s3cret@db.internal:5432/corral"
    config = CorralConfig.model_validate({"home": tmp_path, "journal": {"url": url}})
    runner = TemporalRunner.from_settings(resolve_executor_settings(config, kind="temporal"))
    store = blob_store(runner.settings)
    assert isinstance(store, PostgresBlobStore)
    assert "db.internal" in store.where and "s3cret" not in store.where
    alone = blob_store(TemporalSettings(address="127.0.0.1:7233", blob_dir=tmp_path / "blobs"))
    assert alone == FileBlobStore(tmp_path / "blobs")


def user_with_few_connections(url: str, limit: int) -> str:
    """A database user who may hold at most `limit` connections at once."""
    import psycopg

    role = f"blobs_{uuid.uuid4().hex[:12]}"  # roles are the server's, not the database's
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT {limit}")
        conn.execute(f"GRANT ALL ON SCHEMA public TO {role}")
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}"))


async def test_a_hundred_blobs_at_once_fit_through_a_user_allowed_few_connections(
    postgres_url: str,
) -> None:
    limited = await anyio.to_thread.run_sync(user_with_few_connections, postgres_url, 9)
    store = PostgresBlobStore(limited, "the test database")
    blobs = [f"blob {n} ".encode() * 50 for n in range(100)]
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for data in blobs:
                tg.start_soon(partial(store.put, key_of(data), data, run_id="run-many"))
        read = [await store.get(key_of(data)) for data in blobs]
    assert read == blobs
