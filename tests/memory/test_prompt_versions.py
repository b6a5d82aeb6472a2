"""Memory's own prompts are versioned as an agent's base instructions are: each memory keeps the
version of the extraction prompt that produced it, each insight that of the consolidation
prompt, in the journal's file, where they outlive the process (and a journal made before
versions were kept still opens, its old rows without one)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from corral.agents import MemoriesConfig, ModelRequest, open_sqlite_store, prompt_version
from corral.agents.model import ScriptedModelClient
from corral.orchestrator.memory import (
    CONSOLIDATION,
    EXTRACTION,
    PURPOSE_KEY,
    MemoryService,
    open_sqlite_memories,
)
from corral.orchestrator.services import HashingEmbedder

from .test_consolidation import HISTORY, Clock, Model, spec
from .test_store import insight, record

pytestmark = pytest.mark.anyio


def instructions_of(requests: list[ModelRequest], purpose: str) -> set[str]:
    return {r.instructions for r in requests if r.metadata.get(PURPOSE_KEY) == purpose}


async def test_memories_and_insights_keep_the_version_of_the_prompt_that_made_them(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite"
    client = ScriptedModelClient(Model(["use make check", "use tox"]))
    settings = MemoriesConfig(enabled=True, consolidate_every=2)
    async with open_sqlite_memories(journal) as store:
        service = MemoryService(store, settings, embedder=HashingEmbedder, clock=Clock())
        for run in range(2):
            await service.after_run(spec(tmp_path, run), "t", HISTORY, client)
    async with open_sqlite_memories(journal, read_only=True) as store:
        memories, insights = await store.memories(None), await store.insights(None)
    (extraction,) = instructions_of(client.requests, EXTRACTION)
    (consolidation,) = instructions_of(client.requests, CONSOLIDATION)
    assert [m.prompt_version for m in memories] == [prompt_version(extraction)] * 2
    assert [i.prompt_version for i in insights] == [prompt_version(consolidation)]
    assert insights[0].prompt_version != memories[0].prompt_version
    assert str(insights[0].prompt_version).startswith("sha256:")


EXTRACTED, MERGED = prompt_version("extract"), prompt_version("merge")
OLD_TABLES = """
CREATE TABLE memories (
    memory_id TEXT PRIMARY KEY, project TEXT NOT NULL, text TEXT NOT NULL, files TEXT NOT NULL,
    run_id TEXT NOT NULL, agent_id TEXT NOT NULL, created_at REAL NOT NULL,
    embedding BLOB NOT NULL
);
CREATE TABLE memory_insights (
    insight_id TEXT PRIMARY KEY, project TEXT NOT NULL, text TEXT NOT NULL,
    source_ids TEXT NOT NULL, created_at REAL NOT NULL, position INTEGER NOT NULL
);
CREATE TABLE memory_consolidations (project TEXT PRIMARY KEY, consolidated_at REAL NOT NULL);
INSERT INTO memories VALUES ('m-old', '/repo', 'an old fact', '[]', 'run-0', 'a', 1.0, x'');
INSERT INTO memory_insights VALUES ('i-old', '/repo', 'merged', '["m-old"]', 2.0, 0);
"""


async def test_a_journal_from_before_prompt_versions_opens_and_keeps_them_from_then_on(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "journal.sqlite"
    async with open_sqlite_store(journal):
        pass
    with sqlite3.connect(journal) as conn:
        conn.executescript(OLD_TABLES)
    conn.close()
    async with open_sqlite_memories(journal, read_only=True) as store:
        read_only = [m.prompt_version for m in await store.memories(None)]
    async with open_sqlite_memories(journal) as store:
        new = record("m-new", 3.0).model_copy(update={"prompt_version": EXTRACTED})
        merged = insight("i-new", ("m-new",)).model_copy(update={"prompt_version": MERGED})
        await store.add([new], cap=10)
        await store.replace_insights("/repo", [merged], 4.0)
        versions = {m.memory_id: m.prompt_version for m in await store.memories(None)}
        (kept,) = await store.insights(None)
    assert read_only == [None]
    assert versions == {"m-new": EXTRACTED, "m-old": None}
    assert (kept.insight_id, kept.prompt_version) == ("i-new", MERGED)
