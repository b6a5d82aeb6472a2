"""Phase 2: raw memories merged into insights that cite their sources, newest winning; run
after every `consolidate_every` new memories; a forgotten source takes its insights with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.agents import (
    AgentSpec,
    FunctionCall,
    FunctionCallOutput,
    Item,
    MemoriesConfig,
    Message,
    ModelRequest,
    ModelSettings,
)
from corral.agents._assembly import AgentsMdSettings
from corral.agents.model import ScriptedModelClient
from corral.orchestrator.memory import (
    CONSOLIDATION,
    EXTRACTION,
    PURPOSE_KEY,
    InMemoryMemories,
    Insight,
    MemoryRecord,
    MemoryService,
)
from corral.orchestrator.services import HashingEmbedder
from corral.tools import PermissionProfile, SandboxMode

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        self.now += 60.0
        return self.now


def spec(cwd: Path, run: int = 1) -> AgentSpec:
    return AgentSpec(
        agent_id="agent-1",
        run_id=f"run-{run}",
        model=ModelSettings(model="scripted", base_url="http://127.0.0.1:9/v1"),
        instructions="be useful",
        tools=("read_file",),
        cwd=cwd,
        profile=PermissionProfile(sandbox=SandboxMode.WORKSPACE_WRITE, writable_roots=(cwd,)),
        agents_md=AgentsMdSettings(home=cwd / "home"),
    )


HISTORY: list[Item] = [
    Message(role="user", text="find the test command"),
    FunctionCall(call_id="c1", name="read_file", arguments='{"path": "Makefile"}'),
    FunctionCallOutput(call_id="c1", output="check: pytest"),
]


class Model:
    """Extraction answers the next fact; consolidation merges everything it is sent into one
    insight citing every id, keeping the text of the newest (the last line)."""

    def __init__(self, facts: list[str]) -> None:
        self.facts = facts
        self.consolidations: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> str:
        purpose = request.metadata.get(PURPOSE_KEY)
        assert request.tools == () and request.tool_choice == "none"
        if purpose == EXTRACTION:
            return json.dumps({"memories": [{"text": self.facts.pop(0)}]})
        assert purpose == CONSOLIDATION
        self.consolidations.append(request)
        assert isinstance(request.input[0], Message)
        sent = [json.loads(line) for line in request.input[0].text.splitlines()[2:]]
        newest = sent[-1]["text"]
        cited = [m["id"] for m in sent] + ["mem-not-sent"]
        return json.dumps({"insights": [{"text": newest, "sources": cited}]})


async def test_the_tenth_new_memory_consolidates_and_the_newer_fact_wins(tmp_path: Path) -> None:
    store = InMemoryMemories()
    model = Model([f"tests run with tool {i}" for i in range(11)])
    client = ScriptedModelClient(model)
    memories = MemoryService(
        store,
        MemoriesConfig(enabled=True, consolidate_every=10),
        embedder=HashingEmbedder,
        clock=Clock(),
    )
    for run in range(9):
        await memories.after_run(spec(tmp_path, run), "t", HISTORY, client)
    assert model.consolidations == []
    await memories.after_run(spec(tmp_path, 9), "t", HISTORY, client)
    (insight,) = await store.insights(None)
    raw = await store.memories(None)
    assert insight.text == "tests run with tool 9"
    assert set(insight.source_ids) == {m.memory_id for m in raw}
    assert await store.since_consolidation(insight.project) == 0


async def test_forgetting_a_source_drops_its_insight_from_later_recall(tmp_path: Path) -> None:
    store = InMemoryMemories()
    client = ScriptedModelClient(Model(["use make check", "use tox"]))
    memories = MemoryService(
        store,
        MemoriesConfig(enabled=True, consolidate_every=2),
        embedder=HashingEmbedder,
        clock=Clock(),
    )
    for run in range(2):
        await memories.after_run(spec(tmp_path, run), "t", HISTORY, client)
    before = await memories.recall(spec(tmp_path), "how do I run the tests", [])
    assert before is not None and "Insights:" in before
    (insight,) = await store.insights(None)
    assert await store.forget(insight.source_ids[0])
    after = await memories.recall(spec(tmp_path), "how do I run the tests", [])
    assert after is not None and "Insights:" not in after and "use make check" not in after


async def test_a_run_that_ends_again_after_a_resume_is_not_remembered_twice(
    tmp_path: Path,
) -> None:
    store = InMemoryMemories()
    model = Model(["use make check", "use make check"])
    client = ScriptedModelClient(model)
    memories = MemoryService(store, MemoriesConfig(enabled=True), embedder=HashingEmbedder)
    assert await memories.after_run(spec(tmp_path), "t", HISTORY, client)
    assert await memories.after_run(spec(tmp_path), "t", HISTORY, client) == []
    assert len(await store.memories(None)) == 1 and len(client.requests) == 1


def fact(n: int) -> MemoryRecord:
    return MemoryRecord(
        memory_id=f"mem-{n:012d}",
        project=PROJECT,
        text=f"fact {n}",
        run_id="run-1",
        agent_id="agent-1",
        created_at=1_800_000_000.0 + n,
    )


PROJECT = "/repo"


class Answers:
    """A consolidation model that answers `insights` and keeps the request it was sent."""

    def __init__(self, insights: list[dict[str, Any]]) -> None:
        self.insights = insights
        self.sent: list[dict[str, Any]] = []

    def __call__(self, request: ModelRequest) -> str:
        assert isinstance(request.input[0], Message)
        self.sent = [json.loads(line) for line in request.input[0].text.splitlines()[2:]]
        return json.dumps({"insights": self.insights})


async def consolidate(count: int, answers: Answers) -> list[Insight]:
    store = InMemoryMemories()
    await store.add([fact(n) for n in range(count)], cap=count)
    memories = MemoryService(store, MemoriesConfig(enabled=True), embedder=HashingEmbedder)
    return await memories.consolidate(PROJECT, ScriptedModelClient(answers), "scripted")


async def test_consolidation_sends_the_newest_hundred_memories_oldest_first_with_dates() -> None:
    answers = Answers([])
    await consolidate(105, answers)
    assert [m["id"] for m in answers.sent] == [fact(n).memory_id for n in range(5, 105)]
    assert answers.sent[0] == {
        "id": fact(5).memory_id,
        "date": fact(5).created_at,
        "text": "fact 5",
    }


async def test_consolidation_keeps_at_most_twelve_insights() -> None:
    many = [{"text": f"insight {n}", "sources": [fact(0).memory_id]} for n in range(13)]
    kept = await consolidate(1, Answers(many))
    assert [i.text for i in kept] == [f"insight {n}" for n in range(12)]


async def test_an_insight_that_cites_no_memory_it_was_sent_is_dropped() -> None:
    answers = Answers(
        [
            {"text": "cites nothing it was sent", "sources": ["mem-not-sent"]},
            {"text": "cites nothing at all", "sources": []},
            {"text": "cites one it was sent", "sources": ["mem-not-sent", fact(1).memory_id]},
        ]
    )
    (kept,) = await consolidate(2, answers)
    assert (kept.text, kept.source_ids) == ("cites one it was sent", (fact(1).memory_id,))


async def test_with_consolidate_every_zero_runs_never_consolidate(tmp_path: Path) -> None:
    store = InMemoryMemories()
    model = Model([f"fact {i}" for i in range(12)])
    settings = MemoriesConfig(enabled=True, consolidate_every=0)
    memories = MemoryService(store, settings, embedder=HashingEmbedder, clock=Clock())
    for run in range(12):
        await memories.after_run(spec(tmp_path, run), "t", HISTORY, ScriptedModelClient(model))
    assert model.consolidations == [] and await store.insights(None) == []
    assert len(await store.memories(None)) == 12
