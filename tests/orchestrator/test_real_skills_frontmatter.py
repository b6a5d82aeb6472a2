"""SKILL.md frontmatter the way published skills write it, found where Codex and Claude Code
keep skills.

Each shape below reproduces one seen in public skill repositories (written afresh here): folded
and literal descriptions, `allowed-tools`, `license`, `metadata:` maps, Claude Code's extra
keys, a missing `name`, unquoted colons, CRLF line ends and a byte-order mark. Each must load
with the name and description its author meant, the extra keys kept as metadata.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.orchestrator.services.skills import SkillCatalog, discover_skills

SHAPES: dict[str, tuple[str, str, str]] = {
    # id: (frontmatter lines, the name meant, the description meant)
    "folded-description": (
        "name: sheet-tools\ndescription: >\n  Reads and edits spreadsheets,\n  keeping formulas.\n"
        "license: Apache-2.0\n",
        "sheet-tools",
        "Reads and edits spreadsheets, keeping formulas.",
    ),
    "literal-description": (
        "name: release-notes\ndescription: |\n  Drafts release notes.\n  Groups by area.\n",
        "release-notes",
        "Drafts release notes. Groups by area.",
    ),
    "allowed-tools-and-metadata": (
        "name: db-migrate\ndescription: Writes schema migrations.\n"
        "allowed-tools: Read, Edit, Bash(alembic:*)\nmetadata:\n  version: 0.3\n"
        "  short-description: Migrations\n  tags: [sql, schema]\n",
        "db-migrate",
        "Writes schema migrations.",
    ),
    "claude-code-keys": (
        "name: triage\ndescription: 'Sorts new issues: bugs, questions, ideas.'\n"
        "argument-hint: '[issue-number]'\nuser-invocable: true\n"
        "disable-model-invocation: false\nmodel: inherit\n",
        "triage",
        "Sorts new issues: bugs, questions, ideas.",
    ),
    "quoted-colon": (
        'name: "api-docs"\ndescription: "Use when: the user edits an endpoint"\n',
        "api-docs",
        "Use when: the user edits an endpoint",
    ),
    "unquoted-colon": (
        "name: bench\ndescription: Runs benchmarks. Use when: timing matters. Note: slow\n",
        "bench",
        "Runs benchmarks. Use when: timing matters. Note: slow",
    ),
    "unquoted-colon-folded-by-indent": (
        "name: bench\ndescription: Runs benchmarks. Trigger: perf work\n  and profiling.\n"
        "license: MIT\n",
        "bench",
        "Runs benchmarks. Trigger: perf work and profiling.",
    ),
    "tab-after-colon": (
        "name: lint\ndescription:\tRuns the linters.\n",
        "lint",
        "Runs the linters.",
    ),
    "missing-name": (
        "description: Formats tables in Markdown.\n",
        "the-folder",
        "Formats tables in Markdown.",
    ),
    "empty-name": (
        "name:\ndescription: Formats tables in Markdown.\n",
        "the-folder",
        "Formats tables in Markdown.",
    ),
    "numeric-name": (
        "name: 2048\ndescription: Plays the tile game.\n",
        "2048",
        "Plays the tile game.",
    ),
    "extra-unknown-keys": (
        "name: x-ray\ndescription: Looks inside binaries.\nversion: 2\nauthor: someone\n"
        "compatibility: any\n",
        "x-ray",
        "Looks inside binaries.",
    ),
}


def _text(header: str, *, crlf: bool = False, bom: bool = False) -> bytes:
    text = f"---\n{header}---\n\n# Steps\n\n1. Do the thing.\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def _discover(project: Path) -> SkillCatalog:
    home = project.parent / "home"
    return discover_skills(project, home=home, corral_home=home / ".corral", environment={})


@pytest.mark.parametrize("layout", [".claude/skills", ".codex/skills", ".agents/skills"])
@pytest.mark.parametrize("ending", ["lf", "crlf", "bom-crlf"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_a_published_frontmatter_shape_loads_with_the_name_and_description_meant(
    shape: tuple[str, str, str], ending: str, layout: str, project: Path
) -> None:
    header, name, description = shape
    path = project / layout / "the-folder" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(_text(header, crlf=ending != "lf", bom=ending == "bom-crlf"))

    catalog = _discover(project)

    (skill,) = catalog.skills
    assert (skill.name, skill.description, skill.path) == (name, description, path)
    assert skill.content.startswith("---")


def test_extra_keys_are_kept_as_metadata_with_their_yaml_types(project: Path) -> None:
    header = SHAPES["allowed-tools-and-metadata"][0]
    path = project / ".claude/skills/db-migrate/SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(_text(header))

    (skill,) = _discover(project).skills

    assert skill.metadata == {
        "allowed-tools": "Read, Edit, Bash(alembic:*)",
        "metadata": {"version": 0.3, "short-description": "Migrations", "tags": ["sql", "schema"]},
    }


def test_an_unquoted_colon_loads_with_one_note_saying_to_quote_it(project: Path) -> None:
    path = project / ".claude/skills/bench/SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(_text(SHAPES["unquoted-colon"][0]))

    catalog = _discover(project)

    assert [skill.name for skill in catalog.skills] == ["bench"]
    (warning,) = catalog.warnings
    assert str(warning).startswith(f"{path}: invalid YAML in the frontmatter at line 3")
    assert str(warning).endswith("read as plain `key: value` lines (quote such values)")


@pytest.mark.parametrize(
    ("header", "fault"),
    [
        ("name: x\ndescription: fine\nnot a key line\n", "invalid YAML in the frontmatter"),
        ("name: x\ndescription:\n", "`description` is empty"),
        ("name: x\n", "`description` is missing from the frontmatter"),
        (
            "name: x\ndescription: Use when: ever\nrequires:\n  env: [TOKEN]\n",
            "invalid YAML in the frontmatter at line 3",
        ),
    ],
    ids=["prose-in-header", "empty-description", "no-description", "unquoted-with-requires"],
)
def test_a_header_that_cannot_be_read_is_still_skipped_with_one_line(
    header: str, fault: str, project: Path
) -> None:
    path = project / ".claude/skills/x/SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(_text(header, crlf=True))

    catalog = _discover(project)

    assert catalog.skills == ()
    (warning,) = catalog.warnings
    assert str(warning).startswith(f"skipped {path}: {fault}")
    assert "\n" not in str(warning)
