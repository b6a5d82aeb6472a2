"""A skill's body is matched by its prose: the frontmatter and fenced code are not read, and a
skill that names a task only in its body is still found for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.services import WordLlamaEmbedder
from corral.orchestrator.services.skills import Skill, SkillMatcher
from corral.orchestrator.services.skills._prose import MAX_PROSE_CHARS, skill_prose

SKILL = """---
name: charts
description: Draws charts.
---
# Charts

Bar and line charts for reports.

```python
import matplotlib
install_everything()
```

Works with quarterly revenue figures.
"""


def test_prose_leaves_out_the_frontmatter_and_the_code() -> None:
    prose = skill_prose(SKILL)

    assert "Bar and line charts" in prose
    assert "quarterly revenue" in prose
    assert "description" not in prose
    assert "install_everything" not in prose


@pytest.mark.parametrize(
    ("fence", "closing"), [("```", "```"), ("~~~", "~~~"), ("```", "`````"), ("~~~~", "~~~~")]
)
def test_a_fence_closes_only_on_its_own_kind_at_least_as_long(fence: str, closing: str) -> None:
    other = "~~~" if fence[0] == "`" else "```"
    text = f"before\n{fence}js\ncode()\n{other}\nstill()\n{closing}\nafter"

    assert skill_prose(text).split("\n") == ["before", "after"]


def test_a_shorter_fence_of_the_same_kind_does_not_close_a_longer_one() -> None:
    text = "before\n````md\n```\nquoted()\n```\n````\nafter"

    assert skill_prose(text).split("\n") == ["before", "after"]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert skill_prose("intro\n```\ncode\nmore code") == "intro"


def test_a_file_without_frontmatter_is_all_prose() -> None:
    assert skill_prose("# Title\ntext") == "# Title\ntext"


def test_a_megabyte_of_prose_is_read_only_up_to_the_cap() -> None:
    prose = skill_prose("---\nname: x\n---\n" + "word " * 200_000)

    assert len(prose) <= MAX_PROSE_CHARS


def skill(name: str, description: str, body: str) -> Skill:
    content = f"---\nname: {name}\ndescription: {description}\n---\n{body}"
    return Skill(name, description, Path(f"/skills/{name}/SKILL.md"), "extra", content)


def test_a_skill_is_found_by_a_term_only_its_body_names() -> None:
    skills = [
        skill("ml-toolkit", "Machine learning in Python.", "Clustering with kmeans and dbscan."),
        skill("plots", "Charts and figures in Python.", "Scatter plots, histograms, heatmaps."),
        skill("stats", "Statistics in Python.", "Regression tables and hypothesis tests."),
    ]

    best = SkillMatcher(skills, WordLlamaEmbedder(cache=None)).match("kmeans or dbscan?", 1)

    assert best[0].skill.name == "ml-toolkit"


def test_code_in_a_body_does_not_match_a_request() -> None:
    skills = [
        skill("release", "Ship a release.", "```\nflamingo_deploy()\n```"),
        skill("birds", "Bird watching notes.", "Herons and storks."),
    ]
    matcher = SkillMatcher(skills, WordLlamaEmbedder(cache=None))

    matches = matcher.match("flamingo", 2, method="bm25")

    assert [m.skill.name for m in matches if m.score > 0] == []
