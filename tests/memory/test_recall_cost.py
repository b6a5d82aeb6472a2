"""What recall costs a turn: the run's changed files read incrementally (the same answer as
deriving them from scratch), the query embedded once, and a project without memories counted
once per run instead of loaded every turn."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import ClassVar, overload

import numpy as np
import pytest

from corral.agents import (
    AgentSpec,
    FunctionCall,
    FunctionCallOutput,
    Item,
    MemoriesConfig,
    Message,
    ModelSettings,
)
from corral.agents._assembly import AgentsMdSettings
from corral.agents.model import ScriptedModelClient
from corral.orchestrator.memory import InMemoryMemories, MemoryRecord, MemoryService, project_of
from corral.orchestrator.memory._changes import RunChanges
from corral.orchestrator.memory._transcript import changed_files
from corral.orchestrator.services import HashingEmbedder
from corral.tools import PermissionProfile, SandboxMode

pytestmark = pytest.mark.anyio


def spec(cwd: Path, run_id: str = "run-1") -> AgentSpec:
    return AgentSpec(
        agent_id="agent-1",
        run_id=run_id,
        model=ModelSettings(model="scripted", base_url="http://127.0.0.1:9/v1"),
        instructions="be useful",
        tools=("apply_patch",),
        cwd=cwd,
        profile=PermissionProfile(sandbox=SandboxMode.WORKSPACE_WRITE, writable_roots=(cwd,)),
        agents_md=AgentsMdSettings(home=cwd / "home"),
    )


def patch(call_id: str, *paths: str) -> list[Item]:
    body = "".join(f"*** Update File: {p}\n@@\n-a\n+b\n" for p in paths)
    text = f"*** Begin Patch\n{body}*** End Patch\n"
    return [
        FunctionCall(call_id=call_id, name="apply_patch", arguments=json.dumps({"input": text})),
        FunctionCallOutput(call_id=call_id, output="Done"),
    ]


def talk(text: str) -> list[Item]:
    return [Message(role="assistant", text=text)]


def from_scratch(histories: Sequence[Sequence[Item]]) -> list[str]:
    return changed_files([item for history in histories for item in history])


def test_changed_files_kept_turn_by_turn_match_a_derivation_from_scratch() -> None:
    changes = RunChanges()
    root: list[Item] = [*talk("start"), *patch("r1", "src/a.py")]
    worker: list[Item] = []
    histories: list[list[Item]] = [root, worker]
    steps: list[Callable[[], object]] = [
        lambda: root.extend(patch("r2", "src/b.py", "src/c.py")),
        lambda: worker.extend([*talk("w"), *patch("w1", "lib/x.py")]),
        lambda: root.extend(talk("thinking")),
        # A compaction gives the agent a new, shorter history.
        lambda: histories.__setitem__(0, [*talk("summary"), *patch("r3", "src/d.py")]),
        lambda: histories[0].extend(patch("r4", "src/e.py")),
        lambda: histories.append([*patch("n1", "new/y.py")]),
        lambda: histories.pop(1),
    ]
    assert changes.files(histories) == from_scratch(histories)
    for step in steps:
        step()
        assert changes.files(histories) == from_scratch(histories)
    assert changes.files(histories) == ["src/d.py", "src/e.py", "new/y.py"]


class CountingHistory(Sequence[Item]):
    """A history that counts the items read from it."""

    def __init__(self, items: list[Item]) -> None:
        self.items = items
        self.read = 0

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> Item: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Item]: ...
    def __getitem__(self, index: int | slice) -> Item | Sequence[Item]:
        if isinstance(index, slice):
            found = self.items[index]
            self.read += len(found)
            return found
        self.read += 1
        return self.items[index]

    def __iter__(self) -> Iterator[Item]:
        for item in self.items:
            self.read += 1
            yield item


def memory(project: Path, text: str = "tests run with make check") -> MemoryRecord:
    (vector,) = HashingEmbedder().embed([text])
    return MemoryRecord(
        memory_id="mem-1",
        project=project_of(project),
        text=text,
        files=("src/a.py",),
        run_id="run-0",
        agent_id="agent-0",
        created_at=1_800_000_000.0,
        embedding=tuple(float(x) for x in vector),
    )


def service(
    store: InMemoryMemories, embedder: type[HashingEmbedder] = HashingEmbedder
) -> MemoryService:
    return MemoryService(
        store, MemoriesConfig(enabled=True), embedder=embedder, clock=lambda: 1_800_000_100.0
    )


async def test_a_turn_reads_only_what_the_run_added_since_the_last_turn(tmp_path: Path) -> None:
    store = InMemoryMemories()
    await store.add([memory(tmp_path)], cap=10)
    memories = service(store)
    history = CountingHistory([*talk("start"), *patch("c1", "src/a.py")])
    assert await memories.recall(spec(tmp_path), "how do tests run", [history]) is not None
    first = history.read
    for turn in range(20):
        history.items.extend([*talk(f"turn {turn}"), *patch(f"c{turn + 2}", "src/b.py")])
        history.read = 0
        assert await memories.recall(spec(tmp_path), "how do tests run", [history]) is not None
        assert history.read == 3, "each turn reads only the three items it added"
    assert first == 3


class CountingEmbedder(HashingEmbedder):
    calls: ClassVar[list[list[str]]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        CountingEmbedder.calls.append(list(texts))
        return super().embed(texts)


async def test_a_turn_embeds_its_query_once(tmp_path: Path) -> None:
    CountingEmbedder.calls = []
    store = InMemoryMemories()
    await store.add([memory(tmp_path)], cap=10)
    memories = service(store, CountingEmbedder)
    fragment = await memories.recall(spec(tmp_path), "how do tests run", [])
    assert fragment is not None and "make check" in fragment
    assert CountingEmbedder.calls == [["how do tests run"]]


class CountingStore(InMemoryMemories):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def count(self, project: str) -> int:
        self.asked.append("count")
        return await super().count(project)

    async def memories(self, project: str | None) -> list[MemoryRecord]:
        self.asked.append("memories")
        return await super().memories(project)


async def test_a_project_without_memories_is_counted_once_per_run_and_never_loaded(
    tmp_path: Path,
) -> None:
    store = CountingStore()
    memories = service(store)
    for _ in range(5):
        assert await memories.recall(spec(tmp_path), "how do tests run", []) is None
    assert store.asked == ["count"]
    assert await memories.recall(spec(tmp_path, "run-2"), "how do tests run", []) is None
    assert store.asked == ["count", "count"]


async def test_a_run_that_found_no_memories_sees_the_ones_this_service_writes(
    tmp_path: Path,
) -> None:
    store = CountingStore()
    memories = service(store)
    assert await memories.recall(spec(tmp_path), "how do tests run", []) is None
    learned = json.dumps({"memories": [{"text": "tests run with make check"}]})
    client = ScriptedModelClient(lambda _: learned)
    history = [*talk("start"), *patch("c1", "src/a.py")]
    assert await memories.after_run(spec(tmp_path, "run-0"), "t", history, client)
    fragment = await memories.recall(spec(tmp_path), "how do tests run", [])
    assert fragment is not None and "make check" in fragment
