"""`corral journal delete RUN`, end to end with the real command: the run leaves the journal,
its payload blobs go with it (a blob another run references stays), and a run that may still
run is refused without `--force`. On the embedded journal with the home's `blobs/` folder, and
on PostgreSQL with the blob tables in its database."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from corral.agents._store import Target, open_journal
from corral.orchestrator.memory import MemoryRecord, open_memories
from corral.orchestrator.temporal import FileBlobStore, PostgresBlobStore
from corral.orchestrator.temporal._blobs import BlobStore
from tests.e2e._cli import corral_env, run_corral
from tests.store.conformance.test_store_delete import fill

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

OWN, SHARED, OTHER = (hashlib.sha256(w).hexdigest() for w in (b"own", b"shared", b"other"))


@pytest.fixture(params=["sqlite", "postgres"])
def setting(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[Target, BlobStore, dict[str, str]]:
    """The journal, its blob store, and the environment that names them."""
    home = tmp_path / "home"
    if request.param == "sqlite":
        return home / "journal.sqlite", FileBlobStore(home / "blobs"), corral_env(home)
    url: str = request.getfixturevalue("postgres_url")
    env = corral_env(home, CORRAL_JOURNAL_URL=url)
    return url, PostgresBlobStore(url, url), env


async def seed(journal: Target, blobs: BlobStore) -> None:
    async with open_journal(journal) as store:
        await fill(store, "run-a")
        await fill(store, "run-b")
        await fill(store, "run-live", status="running")
    await blobs.put(OWN, b"own", run_id="run-a")
    await blobs.put(SHARED, b"shared", run_id="run-a")
    await blobs.put(SHARED, b"shared", run_id="run-b")
    await blobs.put(OTHER, b"other", run_id="run-live")


async def test_delete_removes_the_run_and_the_blobs_no_other_run_references(
    setting: tuple[Target, BlobStore, dict[str, str]], tmp_path: Path
) -> None:
    journal, blobs, env = setting
    await seed(journal, blobs)
    done = await run_corral(["journal", "delete", "run-a"], env=env, cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert done.stdout.startswith("deleted run run-a from ")
    assert (
        "2 agents, 4 events, 2 items, 2 ledger entries, 1 lease; 1 payload blob deleted from"
        in (done.stdout)
    )
    assert (await blobs.get(OWN), await blobs.get(SHARED)) == (None, b"shared")
    async with open_journal(journal, read_only=True) as store:
        assert [r.run_id for r in await store.list_runs()] == ["run-b", "run-live"]
    again = await run_corral(["journal", "delete", "run-a"], env=env, cwd=tmp_path)
    assert again.code == 2 and "no run named 'run-a'" in again.stderr
    assert "Traceback" not in again.stderr


async def test_a_running_run_is_refused_and_keeps_its_blobs_until_forced(
    setting: tuple[Target, BlobStore, dict[str, str]], tmp_path: Path
) -> None:
    journal, blobs, env = setting
    await seed(journal, blobs)
    refused = await run_corral(["journal", "delete", "run-live"], env=env, cwd=tmp_path)
    assert refused.code == 2
    assert "run run-live in " in refused.stderr and "is running" in refused.stderr
    assert "--force" in refused.stderr and "Traceback" not in refused.stderr
    assert await blobs.get(OTHER) == b"other"
    forced = await run_corral(["journal", "delete", "run-live", "--force"], env=env, cwd=tmp_path)
    assert forced.code == 0, forced.stderr
    assert await blobs.get(OTHER) is None


async def test_blobs_left_by_a_delete_that_stopped_early_are_deleted_by_the_next(
    setting: tuple[Target, BlobStore, dict[str, str]], tmp_path: Path
) -> None:
    journal, blobs, env = setting
    await seed(journal, blobs)
    async with open_journal(journal) as store:
        await store.delete_run("run-a", at=0.0)  # as if the command had stopped after this
    done = await run_corral(["journal", "delete", "run-a"], env=env, cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert done.stdout.startswith("run run-a was not in ")
    assert "; 1 payload blob deleted from" in done.stdout
    assert await blobs.get(OWN) is None


async def test_the_memories_a_deleted_run_left_are_forgotten_with_it(
    setting: tuple[Target, BlobStore, dict[str, str]], tmp_path: Path
) -> None:
    journal, blobs, env = setting
    await seed(journal, blobs)
    async with open_memories(journal) as memories:
        await memories.add([remembered("m-a", "run-a"), remembered("m-b", "run-b")], cap=10)

    done = await run_corral(["journal", "delete", "run-a"], env=env, cwd=tmp_path)

    assert done.code == 0, done.stderr
    assert done.stdout.rstrip().endswith("; 1 memory it left forgotten")
    async with open_memories(journal, read_only=True) as memories:
        assert [m.memory_id for m in await memories.memories(None)] == ["m-b"]


def remembered(memory_id: str, run_id: str) -> MemoryRecord:
    return MemoryRecord(
        memory_id=memory_id,
        project="/repo",
        text=f"a fact from {run_id}",
        files=("src/a.py",),
        run_id=run_id,
        agent_id="agent-1",
        created_at=1.0,
        embedding=(0.5, -0.25, 1.0),
    )
