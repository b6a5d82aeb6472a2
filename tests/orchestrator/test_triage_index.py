"""The duplicate index over real embeddings (WordLlama) of the bundled demo issues, and tasks."""

from __future__ import annotations

import pytest

from corral.orchestrator.pipelines.triage import (
    TOP_CANDIDATES,
    DuplicateIndex,
    Issue,
    issue_task,
    read_issues,
)
from corral.orchestrator.pipelines.triage.demo_policy import DEMO_ISSUES
from corral.orchestrator.services import HashingEmbedder, WordLlamaEmbedder

PLANTED_PAIRS = ((103, 121), (108, 127), (111, 136), (119, 140))


@pytest.fixture(scope="module")
def demo_issues() -> list[Issue]:
    return read_issues(DEMO_ISSUES)


@pytest.fixture(scope="module")
def demo_index(demo_issues: list[Issue]) -> DuplicateIndex:
    return DuplicateIndex.build(demo_issues, WordLlamaEmbedder())


@pytest.mark.parametrize(("one", "other"), PLANTED_PAIRS)
def test_each_planted_duplicate_is_among_its_partners_top_candidates(
    demo_index: DuplicateIndex, one: int, other: int
) -> None:
    assert other in [c.number for c in demo_index.candidates(one)]
    assert one in [c.number for c in demo_index.candidates(other)]


def test_candidates_are_at_most_three_never_the_issue_itself_and_above_the_floor(
    demo_issues: list[Issue], demo_index: DuplicateIndex
) -> None:
    for issue in demo_issues:
        found = demo_index.candidates(issue.number)
        assert len(found) <= TOP_CANDIDATES
        assert issue.number not in [c.number for c in found]
        similarities = [c.similarity for c in found]
        assert similarities == sorted(similarities, reverse=True)
        assert all(s >= 0.4 for s in similarities)
    lonely = [i.number for i in demo_issues if not demo_index.candidates(i.number)]
    assert lonely, "an issue like no other gets no candidates at all"


def test_only_issues_at_or_above_the_floor_are_candidates() -> None:
    issues = [
        Issue(1, "sync crashes offline", "network error"),
        Issue(2, "sync crashes offline again", "network error"),
        Issue(3, "dark theme", "colours"),
    ]
    loose = DuplicateIndex.build(issues, HashingEmbedder(), floor=0.0)
    strict = DuplicateIndex.build(issues, HashingEmbedder(), floor=0.9)
    assert [c.number for c in loose.candidates(1)] == [2, 3]
    assert [c.number for c in strict.candidates(1)] == [2]
    assert strict.candidates(3) == ()
    assert loose.candidates(99) == ()


def test_a_task_shows_the_issue_and_each_candidate_with_a_snippet(
    demo_issues: list[Issue], demo_index: DuplicateIndex
) -> None:
    (issue,) = [i for i in demo_issues if i.number == 140]
    task = issue_task(issue, demo_index.candidates(140))
    assert task.startswith(
        "# Issue #140: exec format error when running the Docker image on ARM64\n"
        "(opened by @cloud-kat; on 2025-03-11T22:22:22Z)\n\n"
        "Trying the official Docker image"
    )
    assert "\n- #119: Docker image fails on Raspberry Pi (exec format error) (similarity 0." in task
    assert "\n  On a Raspberry Pi 4 running 64-bit Raspberry Pi OS," in task


def test_a_long_body_is_cut_in_the_task_and_the_cut_is_said() -> None:
    task = issue_task(Issue(5, "Logs", "x" * 7000), ())
    assert "[... 1000 more characters not shown]" in task
    assert task.endswith("## Possible duplicates\nNone: no other issue is similar enough.")
