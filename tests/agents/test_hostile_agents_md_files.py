"""A repository can ship its AGENTS.md as a symlink, and write `@if exists=` conditions: neither
may bring what corral's home holds (the API token, the journal), which no agent may read, into
the prompt."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.agents._agents_md import AgentsMd, load_agents_md

pytestmark = pytest.mark.hostile

TOKEN = "corral-api-token-never-in-a-prompt"


def body(doc: AgentsMd) -> str:
    return "\n".join(part.text for part in doc.parts)


def _direct(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").symlink_to(home / "api-token")


def _relative(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").symlink_to(os.path.relpath(home / "api-token", repo))


def _override(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").write_text("be nice\n")
    (repo / "AGENTS.override.md").symlink_to(home / "api-token")


def _through_a_folder(repo: Path, home: Path) -> None:
    (repo / "docs").symlink_to(home)
    (repo / "AGENTS.md").symlink_to("docs/api-token")


def _through_proc_root(repo: Path, home: Path) -> None:
    (repo / "AGENTS.md").symlink_to(f"/proc/self/root{home}/api-token")


def _in_a_subfolder(repo: Path, home: Path) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / "AGENTS.md").symlink_to(home / "api-token")


LINKS: list[Callable[[Path, Path], None]] = [
    _direct,
    _relative,
    _override,
    _through_a_folder,
    _through_proc_root,
    _in_a_subfolder,
]


@pytest.mark.parametrize("link", LINKS, ids=lambda f: f.__name__.strip("_"))
def test_an_agents_md_symlink_never_reads_corrals_home(
    tmp_path: Path, link: Callable[[Path, Path], None]
) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home" / ".corral"
    (repo / ".git").mkdir(parents=True)
    home.mkdir(parents=True)
    (home / "api-token").write_text(TOKEN + "\n")
    link(repo, home)
    cwd = repo / "sub" if (repo / "sub").exists() else repo

    doc = load_agents_md(cwd, home=home)

    assert TOKEN not in body(doc)
    assert any("agents may not read" in w for w in doc.warnings)


@pytest.mark.parametrize(
    "probe", [".corral/api-token", ".corral", "./.corral/../.corral/api-token", "link/api-token"]
)
def test_an_exists_condition_never_probes_corrals_home_inside_the_project(
    tmp_path: Path, probe: str
) -> None:
    """With the working folder at ~ and corral's home at ~/.corral, the home is inside the
    project root: `@if exists=` must still not tell whether a file there exists."""
    user = tmp_path / "user"
    home = user / ".corral"
    (user / ".git").mkdir(parents=True)
    home.mkdir()
    (home / "api-token").write_text(TOKEN)
    (user / "link").symlink_to(".corral")
    text = f"@if exists={probe}\nFOUND\n@endif\n@if exists!={probe}\nMISSING\n@endif\n"
    (user / "AGENTS.md").write_text(text)

    doc = load_agents_md(user, home=home)

    assert "FOUND" not in body(doc) and "MISSING" not in body(doc)
    assert any("corral's home" in w for w in doc.warnings)


def test_an_agents_md_symlink_inside_the_project_is_still_read(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "corral-home"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    home.mkdir()
    (repo / "docs" / "agents.md").write_text("use tabs\n")
    (repo / "AGENTS.md").symlink_to("docs/agents.md")

    assert body(load_agents_md(repo, home=home)) == "use tabs"


@pytest.mark.parametrize(
    "fallback",
    ["../home/.corral/api-token", "../home/.corral/./api-token", "./../home/.corral/api-token"],
)
def test_a_fallback_name_that_climbs_into_corrals_home_is_not_read(
    tmp_path: Path, fallback: str
) -> None:
    """An API request may set `project_doc_fallback_filenames`: a name with `..` in it must not
    reach the token either."""
    repo, home = tmp_path / "repo", tmp_path / "home" / ".corral"
    (repo / ".git").mkdir(parents=True)
    home.mkdir(parents=True)
    (home / "api-token").write_text(TOKEN + "\n")

    doc = load_agents_md(repo, home=home, fallback_names=(fallback,))

    assert TOKEN not in body(doc)
