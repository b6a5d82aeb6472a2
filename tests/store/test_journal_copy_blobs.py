"""`corral journal copy` from SQLite into PostgreSQL also moves the home's payload blobs into the
database's blob tables, referenced by the same runs, so payload references that Temporal
histories of those runs hold resolve from any machine afterwards."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload

from corral.agents._store import open_journal
from corral.orchestrator.temporal import FileBlobStore, PostgresBlobStore
from corral.orchestrator.temporal._codec import BlobReferenceCodec
from tests.e2e._cli import corral_env, run_corral
from tests.store.conformance.test_store_delete import fill

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


def key_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def seed(home: Path) -> FileBlobStore:
    async with open_journal(home / "journal.sqlite") as store:
        for run_id in ("run-a", "run-b"):
            await fill(store, run_id)
    return FileBlobStore(home / "blobs")


async def test_copy_moves_the_copied_runs_blobs_and_old_references_resolve_from_the_database(
    tmp_path: Path, postgres_url: str
) -> None:
    home = tmp_path / "home"
    folder = await seed(home)
    # A payload a Temporal workflow of run-a sent by reference, as the codec stored it.
    payload = Payload(metadata={"encoding": b"binary/plain"}, data=b"x" * 5000)
    (reference,) = await BlobReferenceCodec(folder, 1000, run_id="run-a").encode([payload])
    await folder.put(key_of(b"b only"), b"b only", run_id="run-b")
    await folder.put(key_of(b"no run"), b"no run")
    source = f"sqlite:{home / 'journal.sqlite'}"
    args = ["journal", "copy", "--from", source, "--to", postgres_url, "--run", "run-a"]
    done = await run_corral(args, env=corral_env(home), cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert f"copied 1 payload blob from {home / 'blobs'} to the blobs table of " in done.stdout
    database = PostgresBlobStore(postgres_url, "the database")
    assert await BlobReferenceCodec(database, 1000).decode([reference]) == [payload]
    assert await database.get(key_of(b"b only")) is None
    everything = await run_corral(args[:-2], env=corral_env(home), cwd=tmp_path)
    assert everything.code == 0, everything.stderr
    assert "copied 3 payload blobs from" in everything.stdout
    assert await database.get(key_of(b"no run")) == b"no run"
    # Referenced by the same runs: deleting run-b's references deletes its blob alone.
    assert await database.delete_run("run-b") == 1
    assert await database.get(key_of(b"b only")) is None


async def test_a_corrupt_blob_in_the_home_is_left_and_said(
    tmp_path: Path, postgres_url: str
) -> None:
    home = tmp_path / "home"
    folder = await seed(home)
    key = key_of(b"good")
    await folder.put(key, b"good", run_id="run-a")
    folder.path_of(key).write_bytes(b"tampered")
    source = f"sqlite:{home / 'journal.sqlite'}"
    args = ["journal", "copy", "--from", source, "--to", postgres_url]
    done = await run_corral(args, env=corral_env(home), cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert "left 1 corrupt payload blob in " in done.stdout
    assert await PostgresBlobStore(postgres_url, "db").get(key) is None
