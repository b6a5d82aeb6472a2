from pathlib import Path

import pytest

from corral.agents._agents_md import AgentsMd, AgentsMdError, AgentsMdPart, load_agents_md
from corral.agents._fragments import USER_INSTRUCTIONS, fragment_kind_of
from corral.tools._errors import InvalidInput


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg" / "sub").mkdir(parents=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def texts(doc: AgentsMd) -> list[str]:
    return [part.text for part in doc.parts]


def test_files_from_root_down_to_cwd_in_order_with_their_sources(repo: Path, home: Path) -> None:
    (repo.parent / "AGENTS.md").write_text("above the root: never read")
    (repo / "AGENTS.md").write_text("root rules\n")
    (repo / "pkg" / "sub" / "AGENTS.md").write_text("  sub rules  ")

    doc = load_agents_md(repo / "pkg" / "sub", home=home)

    assert texts(doc) == ["root rules", "sub rules"]
    assert doc.sources == (repo / "AGENTS.md", repo / "pkg" / "sub" / "AGENTS.md")
    assert not any(part.truncated for part in doc.parts)


def test_override_file_beats_agents_md_in_the_same_folder(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").write_text("shared")
    (repo / "AGENTS.override.md").write_text("local override")

    assert texts(load_agents_md(repo, home=home)) == ["local override"]


def test_fallback_names_are_used_after_the_standard_ones(repo: Path, home: Path) -> None:
    (repo / "CLAUDE.md").write_text("claude rules")
    (repo / "pkg" / "AGENTS.md").write_text("agents rules")
    (repo / "pkg" / "CLAUDE.md").write_text("not picked")

    doc = load_agents_md(repo / "pkg", home=home, fallback_names=("", "CLAUDE.md", "CLAUDE.md"))

    assert doc.sources == (repo / "CLAUDE.md", repo / "pkg" / "AGENTS.md")


def test_folder_named_agents_md_is_skipped(repo: Path, home: Path) -> None:
    (repo / "AGENTS.override.md").mkdir()
    (repo / "AGENTS.md").write_text("the real file")

    assert texts(load_agents_md(repo, home=home)) == ["the real file"]


def test_empty_files_are_skipped(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").write_text(" \n\t\n")

    assert load_agents_md(repo, home=home).parts == ()
    assert load_agents_md(repo, home=home).render() is None


def test_global_file_comes_first_and_prefers_a_non_empty_override(repo: Path, home: Path) -> None:
    (home / "AGENTS.override.md").write_text("\n")
    (home / "AGENTS.md").write_text("global rules")
    (repo / "AGENTS.md").write_text("project rules")

    doc = load_agents_md(repo, home=home)

    assert doc.sources == (home / "AGENTS.md", repo / "AGENTS.md")
    assert texts(doc) == ["global rules", "project rules"]


def test_budget_is_shared_and_the_cut_file_says_what_was_omitted(repo: Path, home: Path) -> None:
    (home / "AGENTS.md").write_text("g" * 40_000)  # the global file is outside the budget
    (repo / "AGENTS.md").write_text("a" * 30_000)
    (repo / "pkg" / "AGENTS.md").write_text("b" * 5_000)
    (repo / "pkg" / "sub" / "AGENTS.md").write_text("c" * 10)

    doc = load_agents_md(repo / "pkg" / "sub", home=home)

    global_part, root, pkg, sub = doc.parts
    assert len(global_part.text) == 40_000 and not global_part.truncated
    assert root.text == "a" * 30_000 and not root.truncated
    marker = (
        f"[… truncated: 2232 bytes of {repo / 'pkg' / 'AGENTS.md'} omitted "
        "to fit the 32 KiB AGENTS.md budget]"
    )
    assert pkg.text == "b" * 2768 + "\n\n" + marker and pkg.truncated
    assert sub.truncated and sub.text.startswith("[… truncated: 10 bytes of")


def test_truncation_never_splits_a_character(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").write_text("é" * 10)  # two bytes each

    doc = load_agents_md(repo, home=home, max_bytes=5)

    assert doc.parts[0].text.startswith("éé\n\n[… truncated: 16 bytes of ")
    assert doc.parts[0].text.endswith("to fit the 5 bytes AGENTS.md budget]")


def test_zero_budget_disables_project_files_but_not_the_global_one(repo: Path, home: Path) -> None:
    (home / "AGENTS.md").write_text("global")
    (repo / "AGENTS.md").write_text("project")

    assert texts(load_agents_md(repo, home=home, max_bytes=0)) == ["global"]


def test_without_a_root_marker_only_the_cwd_is_searched(tmp_path: Path, home: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("parent")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "AGENTS.md").write_text("cwd")

    assert texts(load_agents_md(tmp_path / "work", home=home)) == ["cwd"]


def test_empty_marker_list_disables_the_walk_up(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").write_text("root")
    (repo / "pkg" / "AGENTS.md").write_text("pkg")

    assert texts(load_agents_md(repo / "pkg", home=home, root_markers=())) == ["pkg"]


def test_marker_may_be_a_file(tmp_path: Path, home: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "AGENTS.md").write_text("project")
    (tmp_path / "src").mkdir()

    doc = load_agents_md(tmp_path / "src", home=home, root_markers=("pyproject.toml",))

    assert texts(doc) == ["project"]


def test_symlinked_cwd_is_resolved_before_the_walk(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").write_text("root")
    link = repo.parent / "link"
    link.symlink_to(repo / "pkg")

    doc = load_agents_md(link, home=home)

    assert texts(doc) == ["root"] and doc.cwd == link


def test_binary_file_is_refused_with_its_path(repo: Path, home: Path) -> None:
    path = repo / "AGENTS.md"
    path.write_bytes(b"rules\x00\x01")

    with pytest.raises(AgentsMdError, match=f"{path} contains a NUL byte") as caught:
        load_agents_md(repo, home=home)
    assert isinstance(caught.value, InvalidInput)


def test_file_that_is_not_utf8_is_read_lossily_with_a_warning_saying_what_to_do(
    repo: Path, home: Path
) -> None:
    path = repo / "pkg" / "AGENTS.md"
    path.write_bytes(b"caf\xe9 rules")

    doc = load_agents_md(repo / "pkg", home=home)

    assert texts(doc) == ["caf\ufffd rules"]
    assert doc.warnings == (
        f"{path} is not valid UTF-8 (byte 3); read with U+FFFD in place of the bad bytes: "
        "save it as UTF-8",
    )


def test_render_tags_each_part_with_its_source() -> None:
    doc = AgentsMd(
        cwd=Path("/repo/pkg"),
        parts=(
            AgentsMdPart(path=Path("/home/u/AGENTS.md"), text="be brief", truncated=False),
            AgentsMdPart(path=Path("/repo/AGENTS.md"), text="run make check", truncated=False),
        ),
    )

    rendered = doc.render()

    assert rendered == (
        "# AGENTS.md instructions for /repo/pkg\n"
        "\n"
        "<INSTRUCTIONS>\n"
        "<!-- source: /home/u/AGENTS.md -->\n"
        "be brief\n"
        "\n"
        "<!-- source: /repo/AGENTS.md -->\n"
        "run make check\n"
        "</INSTRUCTIONS>"
    )
    assert rendered is not None and fragment_kind_of(rendered) is USER_INSTRUCTIONS


def test_loading_again_after_a_cwd_change_picks_up_the_new_folder(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").write_text("root")
    (repo / "pkg" / "AGENTS.md").write_text("pkg")

    before = load_agents_md(repo, home=home)
    after = load_agents_md(repo / "pkg", home=home)

    assert before != after
    assert after.sources[-1] == repo / "pkg" / "AGENTS.md"


def test_file_that_cannot_be_read_is_refused_with_what_to_do(repo: Path, home: Path) -> None:
    # Root reads any file whatever its mode; a link to /proc/self/mem fails to read for anyone.
    (repo / "AGENTS.md").symlink_to("/proc/self/mem")

    with pytest.raises(AgentsMdError, match=r"cannot read .*make it readable or remove it"):
        load_agents_md(repo, home=home)
