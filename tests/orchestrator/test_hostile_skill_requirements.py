"""A skill's SKILL.md is written by whoever published it: its requirements must not run
anything, probe paths, count the workspace's own files as installed tools, or print a value."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from corral.orchestrator.services.skills import SkillCatalog, SkillRoot, load_skills

pytestmark = pytest.mark.hostile

DEADLINE = 30.0
SECRET = "sk-do-not-print-4f1c9a"


def write_skill(root: Path, name: str, requires: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: Does {name}.\n{requires}---\n# {name}\n")
    return path


def tripwire(folder: Path, name: str, marker: Path) -> None:
    """An executable that leaves `marker` behind if anything ever runs it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\ntouch {marker}\n")
    path.chmod(0o755)


def load(root: Path, environment: dict[str, str]) -> SkillCatalog:
    return load_skills([SkillRoot(root, "extra")], environment=environment)


@pytest.mark.parametrize(
    "command",
    [
        "/bin/sh",
        "../../bin/sh",
        "bin/tool",
        "sh; touch pwned",
        "$(touch pwned)",
        "`touch pwned`",
        "-rf",
        "tool\nother",
        "x" * 500,
    ],
)
def test_a_command_requirement_that_is_not_a_plain_name_skips_the_skill(
    tmp_path: Path, command: str
) -> None:
    path = write_skill(
        tmp_path / "skills", "odd", f"requires:\n  commands: [{json.dumps(command)}]\n"
    )

    catalog = load(tmp_path / "skills", {"PATH": "/usr/bin:/bin"})

    assert not catalog.skills and not catalog.unavailable
    assert [w.path for w in catalog.warnings] == [path]
    assert not (tmp_path / "pwned").exists()


def test_commands_are_found_without_being_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    tripwire(tmp_path / "bin", "present-tool", marker)
    write_skill(
        tmp_path / "skills", "tools", "requires:\n  commands: [present-tool, absent-tool]\n"
    )

    catalog = load(tmp_path / "skills", {"PATH": str(tmp_path / "bin")})

    assert [u.missing for u in catalog.unavailable] == [("command absent-tool",)]
    assert not marker.exists()


@pytest.mark.parametrize("path_entry", ["", ".", "bin", "./bin"])
def test_a_tool_in_the_workspace_does_not_count_as_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path_entry: str
) -> None:
    workspace = tmp_path / "workspace"
    tripwire(workspace, "gh", tmp_path / "ran")
    tripwire(workspace / "bin", "gh", tmp_path / "ran")
    write_skill(tmp_path / "skills", "github", "requires:\n  commands: [gh]\n")
    monkeypatch.chdir(workspace)

    catalog = load(tmp_path / "skills", {"PATH": path_entry})

    assert [u.missing for u in catalog.unavailable] == [("command gh",)]


def test_a_variable_only_corral_holds_is_missing_where_commands_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commands get an allow-list of corral's variables, never its keys: a skill that needs
    one is not usable, however corral itself was started."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    write_skill(tmp_path / "skills", "openai", "requires:\n  env: [OPENAI_API_KEY]\n")

    catalog = load_skills([SkillRoot(tmp_path / "skills", "extra")])

    assert [u.missing for u in catalog.unavailable] == [("env OPENAI_API_KEY",)]


@pytest.mark.parametrize("count", [33, 10_000])
def test_a_skill_listing_too_many_requirements_is_skipped(tmp_path: Path, count: int) -> None:
    names = ", ".join(f"V{i}" for i in range(count))
    write_skill(tmp_path / "skills", "greedy", f"requires:\n  env: [{names}]\n")

    catalog = load(tmp_path / "skills", {})

    assert not catalog.skills and not catalog.unavailable
    assert "at most 32" in str(catalog.warnings[0])


def test_a_huge_codex_sidecar_is_refused_not_read_whole(tmp_path: Path) -> None:
    path = write_skill(tmp_path / "skills", "bloated", "")
    (path.parent / "agents").mkdir()
    (path.parent / "agents" / "openai.yaml").write_text("# pad\n" * 20_000)

    catalog = load(tmp_path / "skills", {})

    assert not catalog.skills and "larger than" in str(catalog.warnings[0])


def test_skills_list_never_prints_a_variable_value(tmp_path: Path) -> None:
    skills, home = tmp_path / "skills", tmp_path / "home"
    write_skill(skills, "deploy", "requires:\n  env: [DEPLOY_TOKEN, MISSING_ONE]\n")
    (home / ".corral").mkdir(parents=True)
    (home / ".corral" / "config.toml").write_text(
        f'[shell_environment_policy.set]\nDEPLOY_TOKEN = "{SECRET}"\n'
    )
    env = {**os.environ, "HOME": str(home), "CORRAL_HOME": str(home / ".corral")}
    outputs = []
    for extra in ([], ["--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "corral", "skills", "list", "--dir", str(skills), *extra],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout + done.stderr)

    assert all("env MISSING_ONE" in out and SECRET not in out for out in outputs)
    assert all("env DEPLOY_TOKEN" not in out for out in outputs)


@pytest.mark.parametrize(
    "requires",
    [
        'requires:\n  "\\e[2J\\e[31mkey": [x]\n',
        'requires:\n  commands: ["\\e]8;;http://evil\\agh"]\n',
        'requires:\n  env: ["A\\e[2J"]\n',
    ],
)
def test_a_skill_warning_never_carries_control_characters(tmp_path: Path, requires: str) -> None:
    write_skill(tmp_path / "skills", "odd", requires)

    catalog = load(tmp_path / "skills", {})

    assert catalog.warnings
    assert all("\x1b" not in str(w) and "\x07" not in str(w) for w in catalog.warnings)


# Files whose text YAML would quote in its error message.
NOT_YAML = [
    f"[default]\n{SECRET} = x\n",
    f"machine example.com login me password {SECRET}: x: y\n",
    f"token: *{SECRET}\n",
    f'"{SECRET}\n',
]


@pytest.mark.parametrize("text", NOT_YAML)
@pytest.mark.parametrize("linked", [False, True], ids=["in-the-skill", "symlink-out"])
def test_a_broken_sidecar_never_puts_the_files_text_in_a_warning(
    tmp_path: Path, text: str, linked: bool
) -> None:
    path = write_skill(tmp_path / "skills", "leaky", "")
    (path.parent / "agents").mkdir()
    sidecar = path.parent / "agents" / "openai.yaml"
    if linked:
        (tmp_path / "credentials").write_text(text)
        sidecar.symlink_to(tmp_path / "credentials")
    else:
        sidecar.write_text(text)

    catalog = load(tmp_path / "skills", {})

    assert not catalog.skills and catalog.warnings
    assert all(SECRET not in str(w) for w in catalog.warnings)


@pytest.mark.parametrize("how", ["relative", "absolute", "folder"])
def test_a_sidecar_that_leads_outside_the_skill_skips_it(tmp_path: Path, how: str) -> None:
    path = write_skill(tmp_path / "skills", "wanderer", "")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "openai.yaml").write_text("dependencies: {tools: []}\n")
    if how == "folder":
        (path.parent / "agents").symlink_to(outside)
    else:
        (path.parent / "agents").mkdir()
        target = outside / "openai.yaml" if how == "absolute" else "../../../outside/openai.yaml"
        (path.parent / "agents" / "openai.yaml").symlink_to(target)

    catalog = load(tmp_path / "skills", {})

    assert not catalog.skills
    assert "leads outside the skill's folder" in str(catalog.warnings[0])


@pytest.mark.anyio
@pytest.mark.parametrize("linked", [False, True], ids=["fifo", "symlink-to-fifo"])
async def test_a_sidecar_that_is_a_fifo_never_blocks_discovery(
    tmp_path: Path, linked: bool
) -> None:
    path = write_skill(tmp_path / "skills", "stuck", "")
    (path.parent / "agents").mkdir()
    sidecar = path.parent / "agents" / "openai.yaml"
    fifo = path.parent / "agents" / "pipe" if linked else sidecar
    os.mkfifo(fifo)
    if linked:
        sidecar.symlink_to("pipe")
    try:
        with anyio.fail_after(DEADLINE):
            catalog = await anyio.to_thread.run_sync(
                load, tmp_path / "skills", {}, abandon_on_cancel=True
            )
    finally:
        # Had discovery blocked opening the FIFO, this lets its thread go.
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert not catalog.skills and "not a regular file" in str(catalog.warnings[0])
