from pathlib import Path

import pytest

from corral.agents._agents_md import load_agents_md
from corral.agents._agents_md_conditions import Condition, parse_condition


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def sent(repo: Path, home: Path, text: str, *, environment: str | None = None) -> str:
    (repo / "AGENTS.md").write_text(text)
    doc = load_agents_md(repo, home=home, environment=environment)
    return "\n".join(part.text for part in doc.parts)


PYTHON_AND_GO = """Always run the tests.
@if language=python
Use pytest.
@endif
@if language=go
Use go test.
@endif
Be brief."""


def test_a_block_for_a_detected_language_is_kept_and_others_dropped(repo: Path, home: Path) -> None:
    (repo / "pyproject.toml").write_text("[project]\n")

    assert sent(repo, home, PYTHON_AND_GO) == "Always run the tests.\nUse pytest.\nBe brief."


@pytest.mark.parametrize(
    ("marker", "language"),
    [
        ("setup.py", "python"),
        ("package.json", "javascript"),
        ("tsconfig.json", "typescript"),
        ("go.mod", "go"),
        ("Cargo.toml", "rust"),
        ("pom.xml", "java"),
        ("Gemfile", "ruby"),
        ("app.csproj", "csharp"),
        ("main.tf", "terraform"),
    ],
)
def test_languages_are_detected_from_marker_files_at_the_project_root(
    repo: Path, home: Path, marker: str, language: str
) -> None:
    (repo / marker).write_text("")

    assert sent(repo, home, f"@if language={language}\nyes\n@endif") == "yes"


def test_a_marker_in_a_folder_between_root_and_cwd_counts_but_not_one_below(
    repo: Path, home: Path
) -> None:
    (repo / "pkg" / "go.mod").write_text("module x\n")
    (repo / "pkg" / "deep").mkdir()
    (repo / "pkg" / "deep" / "Cargo.toml").write_text("")
    (repo / "AGENTS.md").write_text("@if language=go\ngo\n@endif\n@if language=rust\nrust\n@endif")

    doc = load_agents_md(repo / "pkg", home=home)

    assert [part.text for part in doc.parts] == ["go"]


def test_language_aliases_and_case_are_accepted(repo: Path, home: Path) -> None:
    (repo / "package.json").write_text("{}")

    assert sent(repo, home, "@if language=JS\njs\n@endif") == "js"


def test_negation_keeps_a_block_when_the_condition_does_not_hold(repo: Path, home: Path) -> None:
    text = "@if language!=python\nno python here\n@endif"

    assert sent(repo, home, text) == "no python here"


def test_exists_tests_a_path_inside_the_project(repo: Path, home: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "api.md").write_text("")
    text = "@if exists=docs/api.md\nhas api docs\n@endif\n@if exists=missing.txt\nnope\n@endif"

    assert sent(repo, home, text) == "has api docs"


def test_exists_follows_a_symlink_that_stays_inside_the_project(repo: Path, home: Path) -> None:
    (repo / "real").mkdir()
    (repo / "real" / "file").write_text("")
    (repo / "alias").symlink_to("real")

    assert sent(repo, home, "@if exists=alias/file\nfound\n@endif") == "found"


def test_environment_blocks_follow_the_configured_environment(repo: Path, home: Path) -> None:
    text = "@if environment=ci\nno prompts in CI\n@endif\n@if environment!=ci\nlocal\n@endif"

    assert sent(repo, home, text, environment="ci") == "no prompts in CI"
    assert sent(repo, home, text) == "local"


def test_nested_blocks_need_every_condition(repo: Path, home: Path) -> None:
    (repo / "pyproject.toml").write_text("")
    text = "@if language=python\n@if environment=ci\npy in ci\n@endif\npy\n@endif"

    assert sent(repo, home, text, environment="ci") == "py in ci\npy"
    assert sent(repo, home, text) == "py"


def test_conditions_apply_to_the_global_file_too(repo: Path, home: Path) -> None:
    (home / "AGENTS.md").write_text("@if language=rust\nrust only\n@endif\nglobal")

    doc = load_agents_md(repo, home=home)

    assert [part.text for part in doc.parts] == ["global"]


def test_a_file_left_empty_by_its_conditions_is_not_sent(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").write_text("@if language=rust\nrust only\n@endif\n")

    assert load_agents_md(repo, home=home).parts == ()


def test_a_file_without_directives_is_sent_unchanged(repo: Path, home: Path) -> None:
    text = "Email me@if.example when done.\n  @iffy is not a directive"

    assert sent(repo, home, text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("language=python", Condition("language", "python")),
        (" language != go ", Condition("language", "go", negated=True)),
        ("exists=docs/a b.md", Condition("exists", "docs/a b.md")),
        ("environment=ci", Condition("environment", "ci")),
    ],
)
def test_conditions_parse_to_key_value_and_negation(text: str, expected: Condition) -> None:
    assert parse_condition(text) == expected


def test_a_warning_names_the_line_in_the_file_as_written(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").write_text("\n\n\nintro\n@if colour=blue\nx\n@endif\n")

    doc = load_agents_md(repo, home=home)

    assert [w.split(": ")[0] for w in doc.warnings] == [f"{repo / 'AGENTS.md'}:5"]
