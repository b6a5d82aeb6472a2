"""Relevance ranking against the formula, with fixed clocks:
similarity * exp(-age_hours / 168) * (1.5 if same project) * (1 + Jaccard(files, changed))."""

from __future__ import annotations

import math

import pytest

from corral.orchestrator.memory import MemoryRecord, jaccard, rank, relevance

NOW = 1_800_000_000.0
HOUR = 3600.0


def memory(
    memory_id: str,
    embedding: tuple[float, ...],
    *,
    hours_old: float = 0.0,
    project: str = "/repo",
    files: tuple[str, ...] = (),
) -> MemoryRecord:
    return MemoryRecord(
        memory_id=memory_id,
        project=project,
        text=f"fact {memory_id}",
        files=files,
        run_id="run-1",
        agent_id="agent-1",
        created_at=NOW - hours_old * HOUR,
        embedding=embedding,
    )


def test_relevance_is_the_formula_of_the_issue() -> None:
    got = relevance(0.8, 84.0, same_project=True, overlap=0.5)
    assert got == pytest.approx(0.8 * math.exp(-84.0 / 168) * 1.5 * 1.5)
    assert relevance(0.8, 0.0, same_project=False, overlap=0.0) == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [((), (), 0.0), (("x",), ("x",), 1.0), (("x", "y"), ("y", "z"), 1 / 3), (("x",), (), 0.0)],
)
def test_jaccard_is_shared_over_all(
    a: tuple[str, ...], b: tuple[str, ...], expected: float
) -> None:
    assert jaccard(a, b) == pytest.approx(expected)


def test_a_week_old_memory_weighs_e_times_less_than_a_new_one() -> None:
    fresh = memory("fresh", (1.0, 0.0))
    old = memory("old", (1.0, 0.0), hours_old=168)
    ranked = rank((1.0, 0.0), [old, fresh], project="/repo", changed_files=(), now=NOW)
    assert [r.memory.memory_id for r in ranked] == ["fresh", "old"]
    assert ranked[0].relevance == pytest.approx(1.5)
    assert ranked[1].relevance == pytest.approx(1.5 / math.e)


def test_each_factor_of_the_formula_is_applied_to_every_ranked_memory() -> None:
    memories = [
        memory("same", (1.0, 1.0), hours_old=10),
        memory("other", (1.0, 0.0), hours_old=2, project="/elsewhere"),
        memory("files", (0.0, 1.0), hours_old=30, files=("a.py", "b.py")),
    ]
    ranked = rank((1.0, 0.0), memories, project="/repo", changed_files=("a.py",), now=NOW)
    by_id = {r.memory.memory_id: r for r in ranked}
    cos45 = 1 / math.sqrt(2)
    assert by_id["same"].relevance == pytest.approx(cos45 * math.exp(-10 / 168) * 1.5)
    assert by_id["other"].relevance == pytest.approx(1.0 * math.exp(-2 / 168))
    assert by_id["files"].relevance == pytest.approx(0.0)
    assert [r.memory.memory_id for r in ranked] == ["same", "other", "files"]


def test_file_overlap_with_this_runs_changes_lifts_a_memory_above_a_closer_one() -> None:
    plain = memory("plain", (1.0, 0.0))
    touching = memory("touching", (0.9, math.sqrt(1 - 0.81)), files=("src/app.py",))
    ranked = rank(
        (1.0, 0.0), [plain, touching], project="/repo", changed_files=("src/app.py",), now=NOW
    )
    assert [r.memory.memory_id for r in ranked] == ["touching", "plain"]
    assert ranked[0].relevance == pytest.approx(0.9 * 1.5 * 2)


def test_only_the_twenty_nearest_are_ranked_and_ten_are_kept() -> None:
    # 25 memories: the 20 most similar are old, the 5 least similar are brand new. The new
    # ones would win on relevance, but they are not among the 20 nearest, so none is kept.
    near = [memory(f"near-{i:02}", (1.0, 0.01 * i), hours_old=500) for i in range(20)]
    far = [memory(f"far-{i}", (0.2, 1.0)) for i in range(5)]
    ranked = rank((1.0, 0.0), near + far, project="/repo", changed_files=(), now=NOW)
    assert len(ranked) == 10
    assert all(r.memory.memory_id.startswith("near-") for r in ranked)
    assert [r.memory.memory_id for r in ranked] == [f"near-{i:02}" for i in range(10)]


def test_a_memory_from_the_future_counts_as_new_not_as_heavier() -> None:
    ahead = memory("ahead", (1.0, 0.0), hours_old=-48)
    (ranked,) = rank((1.0, 0.0), [ahead], project="/repo", changed_files=(), now=NOW)
    assert ranked.relevance == pytest.approx(1.5)
