"""Codex's `[[skills.config]]` entries and corral's `[skills] dirs`, as `corral skills list`
and a run's discovery read them from the user's config.

An `enabled = false` entry names a SKILL.md that is never loaded (a skill of the same name
further down then shows); a later entry for the same file switches it back on; relative paths
are the config file's. `corral skills list` shows what agents here would be offered: the
config's skill folders included, turned-off skills left out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corral.agents._config import ConfigError, load_config
from corral.orchestrator.services.skills import discover_skills

CLI_TIMEOUT = 60


def _skill(folder: Path, name: str, description: str) -> Path:
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n")
    return path


def _places(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A git project, a home folder and its corral home."""
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".git").mkdir(parents=True)
    (home / ".corral").mkdir(parents=True)
    return project, home, home / ".corral"


def _discover(project: Path, home: Path, corral_home: Path) -> list[tuple[str, Path]]:
    env = {"HOME": str(home), "CORRAL_HOME": str(corral_home)}
    config = load_config(cwd=project, env=env).config
    catalog = discover_skills(
        project,
        home=home,
        corral_home=corral_home,
        skills_dirs=config.skills.dirs,
        environment={},
        disabled=config.skills.disabled,
        disabled_names=config.skills.disabled_names,
    )
    return [(skill.name, skill.path) for skill in catalog]


def test_a_skill_turned_off_by_path_is_not_loaded_and_the_one_below_shows(tmp_path: Path) -> None:
    project, home, corral_home = _places(tmp_path)
    off = _skill(project / ".claude/skills/lint", "lint", "The project's linter steps.")
    below = _skill(home / ".codex/skills/lint", "lint", "The user's linter steps.")
    kept = _skill(project / ".agents/skills/docs", "docs", "Writes docs.")
    (corral_home / "config.toml").write_text(
        f'[[skills.config]]\npath = "{off}"\nenabled = false\n'
    )

    assert _discover(project, home, corral_home) == [("docs", kept), ("lint", below)]


def test_a_later_entry_for_the_same_file_wins_and_paths_are_the_config_files(
    tmp_path: Path,
) -> None:
    project, home, corral_home = _places(tmp_path)
    mine = _skill(corral_home / "skills/notes", "notes", "Keeps notes.")
    config = corral_home / "config.toml"
    entry = '[[skills.config]]\npath = "skills/notes/SKILL.md"\nenabled = {}\n'
    config.write_text(entry.format("false"))
    assert _discover(project, home, corral_home) == []

    config.write_text(entry.format("false") + entry.format("true"))
    assert _discover(project, home, corral_home) == [("notes", mine)]


def test_skills_list_shows_the_configs_folders_and_leaves_out_turned_off_skills(
    tmp_path: Path,
) -> None:
    project, home, corral_home = _places(tmp_path)
    extra = _skill(tmp_path / "team-skills/deploy", "deploy", "Ships a release.")
    off = _skill(tmp_path / "team-skills/legacy", "legacy", "The old way.")
    (corral_home / "config.toml").write_text(
        f'[skills]\ndirs = ["{tmp_path / "team-skills"}"]\n'
        f'[[skills.config]]\npath = "{off}"\nenabled = false\n'
    )
    env = {**os.environ, "HOME": str(home), "CORRAL_HOME": str(corral_home)}
    done = subprocess.run(
        [sys.executable, "-m", "corral", "skills", "list", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [(s["name"], s["path"]) for s in json.loads(done.stdout)] == [("deploy", str(extra))]


def test_a_skill_turned_off_by_name_is_dropped_wherever_it_is_found(tmp_path: Path) -> None:
    project, home, corral_home = _places(tmp_path)
    _skill(project / ".claude/skills/lint", "lint", "The project's linter steps.")
    _skill(home / ".codex/skills/lint", "lint", "The user's linter steps.")
    kept = _skill(project / ".agents/skills/docs", "docs", "Writes docs.")
    (corral_home / "config.toml").write_text('[[skills.config]]\nname = "lint"\nenabled = false\n')

    assert _discover(project, home, corral_home) == [("docs", kept)]


def test_an_entry_naming_neither_path_nor_name_is_a_clear_error(tmp_path: Path) -> None:
    project, home, corral_home = _places(tmp_path)
    (corral_home / "config.toml").write_text("[[skills.config]]\nenabled = false\n")
    env = {"HOME": str(home), "CORRAL_HOME": str(corral_home)}
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=project, env=env)
    assert "name the skill by `path` (its SKILL.md) or by `name`" in str(caught.value)
