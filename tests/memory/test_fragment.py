"""The memory fragment: what a turn is shown, and how the context tracker places it."""

from __future__ import annotations

from pathlib import Path

from corral.agents import MEMORY_CONTEXT, EnvironmentContext, TurnContext, is_contextual
from corral.agents._context import ContextTracker
from corral.orchestrator.memory import Insight, MemoryRecord, render_memory


def record(memory_id: str, text: str = "Run the tests with make check.") -> MemoryRecord:
    return MemoryRecord(
        memory_id=memory_id,
        project="/repo",
        text=text,
        run_id="run-1",
        agent_id="agent-1",
        created_at=1_800_000_000.0,
    )


def test_at_most_five_memories_of_two_hundred_characters_are_shown() -> None:
    memories = [record(f"mem-{i}", "x" * 500) for i in range(10)]
    fragment = render_memory([], memories)
    assert fragment is not None and MEMORY_CONTEXT.matches(fragment)
    shown = [line for line in fragment.splitlines() if line.startswith("- [")]
    assert [line.split(",")[0] for line in shown] == [f"- [mem-{i}" for i in range(5)]
    assert all(len(line.split("] ", 1)[1].strip('"')) <= 200 for line in shown)


def test_insights_come_first_and_memories_they_cite_are_not_repeated() -> None:
    insight = Insight(
        insight_id="ins-1", project="/repo", text="Use make.", source_ids=("mem-0",), created_at=1
    )
    fragment = render_memory([insight], [record("mem-0"), record("mem-1")])
    assert fragment is not None
    assert fragment.index("Use make.") < fragment.index("mem-1")
    assert "mem-0" not in fragment


def test_nothing_to_recall_renders_no_fragment() -> None:
    assert render_memory([], []) is None


def _context(memory: str | None) -> TurnContext:
    environment = EnvironmentContext(
        cwd=Path("/repo"), shell="bash", current_date="2026-12-01", timezone="UTC"
    )
    return TurnContext(
        environment=environment,
        permissions="<permissions instructions>x</permissions instructions>",
        memory=memory,
    )


def test_memory_is_appended_last_and_sent_again_only_when_it_changed() -> None:
    first = render_memory([], [record("mem-1")])
    second = render_memory([], [record("mem-2")])
    tracker = ContextTracker()
    opening = tracker.items_for(_context(first))
    assert opening[-1].text == first and is_contextual(opening[-1].text)
    assert tracker.items_for(_context(first)) == []
    assert [item.text for item in tracker.items_for(_context(second))] == [second]
