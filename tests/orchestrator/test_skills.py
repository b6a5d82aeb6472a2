"""Skills discovery, frontmatter validation and `$name` mentions, on folders built in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents import SKILL, fragment_kind_of
from corral.orchestrator.services.skills import (
    SkillCatalog,
    discover_skills,
    mentioned_skills,
    render_skill,
)


def write_skill(folder: Path, name: str, description: str = "Does one thing well.") -> Path:
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSteps.\n")
    return path


def write_raw(folder: Path, text: str | bytes) -> Path:
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A git project, a home folder and a corral home, none of them the real ones."""
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    return project, home, home / ".corral"


def discover(places: tuple[Path, Path, Path], cwd: Path | None = None) -> SkillCatalog:
    project, home, corral_home = places
    return discover_skills(cwd or project, home=home, corral_home=corral_home)


def test_skills_are_found_in_corral_codex_claude_and_agents_folders_sorted_by_name(
    places: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    project, home, corral_home = places
    write_skill(project / ".corral/skills/p-corral", "p-corral")
    write_skill(project / ".codex/skills/p-codex", "p-codex")
    write_skill(project / ".claude/skills/group/deeper/p-claude", "p-claude")
    write_skill(project / ".agents/skills/p-agents", "p-agents")
    write_skill(corral_home / "skills/u-corral", "u-corral")
    write_skill(home / ".codex/skills/u-codex", "u-codex")
    write_skill(home / ".claude/skills/u-claude", "u-claude")
    write_skill(home / ".agents/skills/u-agents", "u-agents")
    extra = tmp_path / "extra"
    write_skill(extra / "x-extra", "x-extra")
    # A SKILL.md inside a skill's folder is one of its resources, not another skill.
    write_skill(project / ".corral/skills/p-corral/templates/inner", "inner")

    catalog = discover_skills(
        project / "src", home=home, corral_home=corral_home, skills_dirs=[extra]
    )

    found = [(skill.name, skill.scope) for skill in catalog]
    assert found == [
        ("p-agents", "project"),
        ("p-claude", "project"),
        ("p-codex", "project"),
        ("p-corral", "project"),
        ("u-agents", "user"),
        ("u-claude", "user"),
        ("u-codex", "user"),
        ("u-corral", "user"),
        ("x-extra", "extra"),
    ]
    assert catalog.warnings == ()


def test_project_skill_wins_over_home_skill_of_the_same_name_with_a_warning_naming_both(
    places: tuple[Path, Path, Path],
) -> None:
    project, home, _ = places
    mine = write_skill(project / ".claude/skills/deploy", "deploy", "Deploys the project way.")
    theirs = write_skill(home / ".agents/skills/deploy", "deploy", "Deploys the home way.")

    catalog = discover(places)

    skill = catalog.get("deploy")
    assert skill is not None and skill.path == mine
    assert skill.description == "Deploys the project way."
    (warning,) = catalog.warnings
    assert str(warning) == (
        f"skipped {theirs}: the skill `deploy` is already loaded from {mine} (project), "
        "which takes precedence"
    )


def test_without_a_git_marker_only_the_working_folder_is_the_project(tmp_path: Path) -> None:
    outer, home = tmp_path / "outer", tmp_path / "home"
    write_skill(outer / ".corral/skills/outer-skill", "outer-skill")
    write_skill(outer / "inner/.corral/skills/inner-skill", "inner-skill")

    catalog = discover_skills(outer / "inner", home=home, corral_home=home / ".corral")

    assert [skill.name for skill in catalog] == ["inner-skill"]


def test_an_over_long_description_is_cut_with_one_warning_not_skipped(
    places: tuple[Path, Path, Path],
) -> None:
    project, _, _ = places
    words = " ".join(f"word{n}" for n in range(200))  # about 1,400 characters
    path = write_skill(project / ".corral/skills/wordy", "wordy", words)

    catalog = discover(places)

    (skill,) = catalog
    assert skill.path == path
    assert len(skill.description) <= 1024
    assert skill.description.endswith("\u2026")
    assert words.startswith(skill.description[:-1])
    assert [str(w) for w in catalog.warnings] == [
        f"{path}: `description` is {len(words)} characters long, past the limit of 1024; "
        "listed cut to that length"
    ]


@pytest.mark.parametrize(
    ("field", "length", "fault"),
    [
        ("name", 64, None),
        ("name", 65, "`name` is 65 characters long; the limit is 64"),
        ("description", 1024, None),
    ],
)
def test_name_and_description_limits_are_inclusive(
    places: tuple[Path, Path, Path], field: str, length: int, fault: str | None
) -> None:
    project, _, _ = places
    fields = {"name": "limits", "description": "Checks limits."}
    fields[field] = "a" * length
    path = write_skill(project / ".corral/skills/limits", fields["name"], fields["description"])

    catalog = discover(places)

    if fault is None:
        assert [skill.path for skill in catalog] == [path]
        assert catalog.warnings == ()
    else:
        assert len(catalog) == 0
        assert [str(w) for w in catalog.warnings] == [f"skipped {path}: {fault}"]


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        (
            "---\nname: broken\ndescription: fine\nthis line has no colon\n---\nBody.\n",
            "invalid YAML in the frontmatter at line 4: could not find expected ':'",
        ),
        ("# No frontmatter\n\nJust prose.\n", "no frontmatter: the file must start with"),
        ("---\nname: half\n", "the frontmatter has no closing `---` line"),
        ("---\nname: lonely\n---\n", "`description` is missing from the frontmatter"),
        ("---\n- a list\n---\n", "the frontmatter must be YAML keys and values"),
        (b"---\nname: bin\x00\n---\n", "the file is binary, not Markdown text"),
        (b"---\nname: caf\xe9\n---\n", "the file is not UTF-8 text"),
    ],
)
def test_an_invalid_skill_is_skipped_with_a_warning_and_the_others_still_load(
    places: tuple[Path, Path, Path], text: str | bytes, fault: str
) -> None:
    project, _, _ = places
    bad = write_raw(project / ".codex/skills/bad", text)
    good = write_skill(project / ".codex/skills/good", "good")

    catalog = discover(places)

    assert [skill.path for skill in catalog] == [good]
    (warning,) = catalog.warnings
    assert warning.path == bad
    assert str(warning).startswith(f"skipped {bad}: {fault}")


def test_frontmatter_keys_beyond_name_and_description_are_kept(
    places: tuple[Path, Path, Path],
) -> None:
    project, _, _ = places
    text = "---\nname: kept\ndescription: >\n  Folded\n  text.\nlicense: MIT\nmetadata:\n"
    write_raw(project / ".corral/skills/kept", text + "  version: 2\n---\nBody.\n")

    (skill,) = discover(places)

    assert skill.description == "Folded text."
    assert skill.metadata == {"license": "MIT", "metadata": {"version": 2}}


def test_dollar_mentions_load_known_skills_once_and_ignore_shell_variables(
    places: tuple[Path, Path, Path],
) -> None:
    project, _, _ = places
    path = write_skill(project / ".corral/skills/pdf-tools", "pdf-tools", "Works with PDFs.")
    write_skill(project / ".corral/skills/deploy", "deploy")
    catalog = discover(places)
    text = "Use $deploy: then $pdf-tools, with $HOME and $unknown; again $pdf-tools. Cost: 5$x"

    skills = mentioned_skills(text, catalog)

    assert [skill.name for skill in skills] == ["deploy", "pdf-tools"]
    rendered = render_skill(skills[1])
    assert rendered == (
        f"<skill>\n<name>pdf-tools</name>\n<path>{path}</path>\n"
        "---\nname: pdf-tools\ndescription: Works with PDFs.\n---\n# pdf-tools\n\nSteps.\n"
        "</skill>"
    )
    assert fragment_kind_of(rendered) is SKILL
