"""Skills that declare the variables and commands they need: checked where commands run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from corral.agents import CorralConfig
from corral.orchestrator.services import HashingEmbedder
from corral.orchestrator.services._skills_service import SkillsService
from corral.orchestrator.services.skills import (
    SkillCatalog,
    SkillRoot,
    load_skills,
    mentioned_skills,
)

DEADLINE = 30.0


def write_skill(root: Path, name: str, requires: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: Ships {name}.\n{requires}---\n# {name}\n")
    return path


def executable(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def load(root: Path, environment: dict[str, str]) -> SkillCatalog:
    return load_skills([SkillRoot(root, "extra")], environment=environment)


def test_a_skill_missing_a_variable_is_set_apart_with_what_is_missing(tmp_path: Path) -> None:
    write_skill(tmp_path, "deploy", "requires:\n  env: [DEPLOY_TOKEN, REGION]\n")
    write_skill(tmp_path, "plain")

    catalog = load(tmp_path, {"PATH": "/usr/bin", "REGION": "eu"})

    assert [s.name for s in catalog] == ["plain"]
    assert [(u.skill.name, u.missing) for u in catalog.unavailable] == [
        ("deploy", ("env DEPLOY_TOKEN",))
    ]


def test_an_empty_variable_counts_as_missing(tmp_path: Path) -> None:
    write_skill(tmp_path, "deploy", "requires:\n  env: DEPLOY_TOKEN\n")

    catalog = load(tmp_path, {"DEPLOY_TOKEN": ""})

    assert [u.missing for u in catalog.unavailable] == [("env DEPLOY_TOKEN",)]


def test_commands_are_looked_up_on_path_without_running_them(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    executable(bin_dir, "gh")
    write_skill(tmp_path / "skills", "github", "requires:\n  commands: [gh]\n")
    write_skill(tmp_path / "skills", "jq-tools", "requires:\n  bins: [jq]\n")

    catalog = load(tmp_path / "skills", {"PATH": str(bin_dir)})

    assert [s.name for s in catalog] == ["github"]
    assert [u.missing for u in catalog.unavailable] == [("command jq",)]


def test_codex_sidecar_env_var_dependencies_are_read(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "figma")
    (path.parent / "agents").mkdir()
    (path.parent / "agents" / "openai.yaml").write_text(
        "dependencies:\n  tools:\n"
        "    - {type: env_var, value: FIGMA_TOKEN, description: a token}\n"
        "    - {type: mcp, value: figma}\n"
    )

    catalog = load(tmp_path, {})

    assert [u.missing for u in catalog.unavailable] == [("env FIGMA_TOKEN",)]


@pytest.mark.parametrize(
    "requires",
    [
        "requires: yes\n",
        "requires:\n  packages: [numpy]\n",
        "requires:\n  env: [1BAD]\n",
        "requires:\n  commands: [{name: gh}]\n",
    ],
)
def test_requirements_that_cannot_be_checked_skip_the_skill_with_a_warning(
    tmp_path: Path, requires: str
) -> None:
    path = write_skill(tmp_path, "odd", requires)

    catalog = load(tmp_path, {})

    assert not catalog.skills and not catalog.unavailable
    assert [w.path for w in catalog.warnings] == [path]
    assert "requires" in str(catalog.warnings[0])


def test_an_unavailable_skill_is_never_injected_by_a_mention(tmp_path: Path) -> None:
    write_skill(tmp_path, "deploy", "requires:\n  env: [DEPLOY_TOKEN]\n")

    catalog = load(tmp_path, {})

    assert mentioned_skills("use $deploy now", catalog) == []


@pytest.mark.anyio
async def test_the_run_offers_a_skill_whose_variable_the_shell_policy_sets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no skills of the machine's user
    write_skill(tmp_path / "skills", "deploy", "requires:\n  env: [DEPLOY_TOKEN]\n")

    def config(set_vars: dict[str, str]) -> CorralConfig:
        return CorralConfig.model_validate(
            {
                "home": tmp_path / "home",
                "skills": {"dirs": [tmp_path / "skills"]},
                "shell_environment_policy": {"set": set_vars},
            }
        )

    with anyio.fail_after(DEADLINE):
        without = await SkillsService.discover(config({}), tmp_path, embedder=HashingEmbedder())
        with_it = await SkillsService.discover(
            config({"DEPLOY_TOKEN": "t"}), tmp_path, embedder=HashingEmbedder()
        )
        offered = await with_it.for_task("deploy the site with $deploy")
        refused = await without.for_task("deploy the site with $deploy")

    assert offered.listing is not None and "deploy" in offered.listing and offered.attachments
    assert refused.listing is None and not refused.attachments


def test_skills_list_shows_unavailable_skills_and_what_they_miss(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "deploy", "requires:\n  env: [DEPLOY_TOKEN]\n  commands: [no-such-x]\n")
    write_skill(skills, "plain")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "CORRAL_HOME": str(home / ".corral")}

    def corral(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "corral", "skills", "list", "--dir", str(skills), *args]
        return subprocess.run(
            argv, cwd=home, env=env, capture_output=True, text=True, timeout=DEADLINE, check=False
        )

    listed = corral("--json")
    human = corral()

    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["plain"]["available"] is True and rows["plain"]["missing"] == []
    assert rows["deploy"]["available"] is False
    assert rows["deploy"]["missing"] == ["env DEPLOY_TOKEN", "command no-such-x"]
    assert "deploy  missing: env DEPLOY_TOKEN, command no-such-x" in human.stdout
