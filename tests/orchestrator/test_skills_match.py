"""Skill matching and the budgeted listing, over the real skills in shared/ with WordLlama."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.services import WordLlamaEmbedder
from corral.orchestrator.services.skills import (
    SkillMatcher,
    SkillRoot,
    estimate_tokens,
    load_skills,
    skills_budget,
)

from .._shared import shared_data


def skills_data() -> Path:
    return shared_data("skills")


@pytest.fixture(scope="module")
def matcher() -> SkillMatcher:
    catalog = load_skills([SkillRoot(skills_data(), "extra")])
    return SkillMatcher(catalog, WordLlamaEmbedder())


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("Turn the PDF of the quarterly report into Markdown for the wiki", "markitdown"),
        ("Our Terraform module has no tests; add some for its outputs", "terraform-test"),
        ("Sign the app and send it to TestFlight and Google Play", "eas-app-stores"),
    ],
)
def test_a_task_finds_its_skill_among_the_top_three(
    matcher: SkillMatcher, task: str, expected: str
) -> None:
    names = [match.skill.name for match in matcher.match(task, 3)]

    assert expected in names


def test_matches_come_best_first_for_every_method(matcher: SkillMatcher) -> None:
    for method in ("fused", "bm25", "embedding"):
        scores = [m.score for m in matcher.match("review Django views", 10, method=method)]
        assert len(scores) == 10
        assert scores == sorted(scores, reverse=True)


def test_blank_text_matches_nothing(matcher: SkillMatcher) -> None:
    assert matcher.match("   ", 5) == []


def test_listing_for_a_tiny_window_stays_within_two_percent_and_leads_with_the_best(
    matcher: SkillMatcher,
) -> None:
    task = "fix the failing GitHub Actions checks on my pull request"
    budget = skills_budget(8_000)

    listing = matcher.listing(task, budget)

    assert budget == 160
    assert 0 < estimate_tokens(listing) <= budget
    best = matcher.match(task, 1)[0].skill
    first_skill_line = next(line for line in listing.splitlines() if line.startswith("- "))
    assert first_skill_line == f"- {best.name}: {best.description} (file: {best.path})"


def test_listing_for_a_full_window_explains_how_to_use_skills_within_budget(
    matcher: SkillMatcher,
) -> None:
    budget = skills_budget(272_000)

    listing = matcher.listing("draft an offer letter for a new engineer", budget)

    assert budget == 5_440
    assert estimate_tokens(listing) <= budget
    assert "### How to use skills" in listing
    assert "- employment-contract-templates: " in listing


def test_a_budget_that_holds_every_skill_lists_every_skill_the_best_first(
    matcher: SkillMatcher,
) -> None:
    task = "draft an offer letter for a new engineer"
    ranked = [m.skill.name for m in matcher.match(task, len(matcher.skills))]

    listing = matcher.listing(task, 1_000_000)

    listed = [line[2:].split(":")[0] for line in _skill_lines(listing)]
    assert len(ranked) < len(matcher.skills)  # the fused head leaves some out
    assert sorted(listed) == sorted(skill.name for skill in matcher.skills)
    assert listed[: len(ranked)] == ranked
    assert "not listed" not in listing


def test_the_listing_counts_every_skill_that_did_not_fit(matcher: SkillMatcher) -> None:
    listing = matcher.listing("draft an offer letter for a new engineer", skills_budget(8_000))

    listed = len(_skill_lines(listing))
    assert f"(not listed: {len(matcher.skills) - listed} more skills" in listing


def test_listing_is_empty_when_not_even_one_skill_fits(matcher: SkillMatcher) -> None:
    assert matcher.listing("anything", 20) == ""


def _skill_lines(listing: str) -> list[str]:
    """The listing's lines that each list one skill: "- name: description (file: path)"."""
    return [line for line in listing.splitlines() if line.startswith("- ") and "(file: " in line]
