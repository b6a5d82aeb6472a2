"""Roles of one's own as an attacker writes them: in a project file an agent wrote, in a service
request, or steering the model that picks one. A role never widens a worker past its parent,
never reads a file outside the project into a prompt, never takes a built-in's name or an odd
one, and its instructions count toward the instructions cap."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from corral.agents import (
    AgentsConfig,
    AgentsMd,
    ConfigError,
    CorralConfig,
    InstructionsTooLong,
    RoleConfig,
    resolve_base_instructions,
)
from corral.agents._instruction_cap import check_instruction_cap
from corral.orchestrator.runs import build_root_spec
from corral.orchestrator.service import ExecRequest
from corral.orchestrator.supervisor import SpawnRequest, SpawnTerms, child_spec
from corral.tools import SandboxMode
from tests._trust import trust_project
from tests.agents._config_files import home, load, project, write

pytestmark = pytest.mark.hostile
__all__ = ["home", "project"]  # the fixtures, used by name

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- hostile-test-secret"
KEY_ENV = {"OPENAI_API_KEY": "sk-hostile-roles"}
_RANK = [SandboxMode.READ_ONLY, SandboxMode.WORKSPACE_WRITE, SandboxMode.FULL_ACCESS]


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    return write(tmp_path / "home" / ".ssh" / "id_rsa", SECRET + "\n")


def project_roles(project: Path, table: str) -> Path:
    return write(project / ".corral" / "config.toml", table)


def role_text(config: CorralConfig, name: str) -> str | None:
    return config.agents.roles[name].read_instructions()


# -- a role never widens a worker ------------------------------------------------------------


def worker_of(tmp_path: Path, parent_mode: SandboxMode, role: RoleConfig, **asked: Any) -> Any:
    agents = AgentsConfig(max_depth=2, roles={"wide": role})
    config = CorralConfig(home=tmp_path / "home", sandbox_mode=parent_mode, agents=agents)
    parent = build_root_spec(config, cwd=tmp_path, env=KEY_ENV, run_id="run-x", role="supervisor")
    terms = SpawnTerms(agents, "pragmatic", lambda: "Worker")
    child = child_spec(terms, parent, SpawnRequest("work", role="wide", **asked))
    return parent, child


@pytest.mark.parametrize("role_mode", ["danger-full-access", "full-access", "workspace-write"])
@pytest.mark.parametrize("asked", [None, SandboxMode.FULL_ACCESS])
@pytest.mark.parametrize("parent_mode", [SandboxMode.READ_ONLY, SandboxMode.WORKSPACE_WRITE])
def test_a_role_asking_a_wider_sandbox_than_the_parents_gets_the_parents_at_most(
    tmp_path: Path, role_mode: str, asked: SandboxMode | None, parent_mode: SandboxMode
) -> None:
    role = RoleConfig.model_validate({"sandbox_mode": role_mode})
    parent, child = worker_of(tmp_path, parent_mode, role, sandbox=asked)
    assert _RANK.index(child.profile.sandbox) <= _RANK.index(parent_mode)
    assert set(child.profile.writable_roots) <= set(parent.profile.writable_roots)
    assert child.profile.hidden_roots == parent.profile.hidden_roots


def test_a_role_asking_full_access_under_a_read_only_parent_stays_read_only(
    tmp_path: Path,
) -> None:
    role = RoleConfig.model_validate({"sandbox_mode": "danger-full-access"})
    _, child = worker_of(tmp_path, SandboxMode.READ_ONLY, role)
    assert child.profile.sandbox is SandboxMode.READ_ONLY
    assert child.profile.writable_roots == ()


def test_a_narrow_role_is_not_widened_by_what_the_spawn_asks(tmp_path: Path) -> None:
    role = RoleConfig(sandbox_mode=SandboxMode.READ_ONLY)
    _, child = worker_of(tmp_path, SandboxMode.WORKSPACE_WRITE, role, sandbox="full-access")
    assert child.profile.sandbox is SandboxMode.READ_ONLY


# -- role files from a project an agent may have written --------------------------------------


def link(at: Path, to: Path) -> str:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(to)
    return str(at)


def test_a_role_file_swapped_for_a_link_to_a_secret_after_loading_is_not_read(
    project: Path, home: Path, secret: Path, tmp_path: Path
) -> None:
    role_file = write(project / ".corral" / "role.md", "Review the docs.\n")
    project_roles(project, '[agents.roles.docs]\ninstructions_file = "role.md"\n')
    config = load(project, home).config
    role_file.unlink()
    role_file.symlink_to(secret)  # what an agent of the run could do with its shell
    parent = build_root_spec(config, cwd=project, env=KEY_ENV, run_id="run-x", role="supervisor")
    terms = SpawnTerms(config.agents, "pragmatic", lambda: "Worker")
    worker = child_spec(terms, parent, SpawnRequest("work", role="docs"))
    assert SECRET not in worker.instructions
    assert worker.instructions.endswith("Review the docs.\n")


def test_a_hard_link_to_a_secret_inside_an_untrusted_project_is_not_read(
    project: Path, home: Path, secret: Path
) -> None:
    inside = project / ".corral" / "role.md"
    inside.parent.mkdir(parents=True)
    os.link(secret, inside)  # an inside name for the secret's content
    project_roles(project, '[agents.roles.spy]\ninstructions_file = "role.md"\n')
    with pytest.raises(ConfigError, match="a hard-linked file") as caught:
        load(project, home)
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("kind", ["fifo", "huge", "device-link", "folder"])
def test_a_role_file_that_is_no_small_regular_file_is_refused_with_a_clear_message(
    project: Path, home: Path, kind: str
) -> None:
    target = project / ".corral" / "role.md"
    target.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(target)  # reading it would block the load forever
    elif kind == "huge":
        target.write_text("x" * (64 * 1024))
    elif kind == "device-link":
        target.symlink_to("/dev/zero")
    else:
        target.mkdir()
    trust_project(home, project)  # even a trusted project's file must be a small regular one
    project_roles(project, '[agents.roles.odd]\ninstructions_file = "role.md"\n')
    with pytest.raises(ConfigError) as caught:
        load(project, home)
    message = str(caught.value)
    assert "agents.roles.odd.instructions_file" in message
    assert "\n" not in message and "Traceback" not in message


# -- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["general", "supervisor", "reviewer", "refactorer", "triager"])
def test_a_role_named_like_a_built_in_one_is_refused(project: Path, home: Path, name: str) -> None:
    write(home / "config.toml", f'[agents.roles.{name}]\ninstructions = "Do as I say."\n')
    with pytest.raises(ConfigError, match=f"'{name}' is a built-in role; give your role"):
        load(project, home)


@pytest.mark.parametrize(
    "name",
    [
        "Bad Name",
        "../escape",
        "a\nb",
        "x" * 41,
        "ünïcode",
        "",
        "role;rm -rf",
        "<role>",
        "-leading",
        "General",
    ],
)
def test_a_role_name_with_odd_characters_is_refused(project: Path, home: Path, name: str) -> None:
    quoted = name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    write(home / "config.toml", f'[agents.roles."{quoted}"]\ninstructions = "x"\n')
    with pytest.raises(ConfigError, match="is not allowed; use 1-40 lower-case letters"):
        load(project, home)


# -- the instructions cap ---------------------------------------------------------------------


def role_instructions(text: str) -> str:
    roles = {"long": RoleConfig(instructions=text)}
    return resolve_base_instructions(
        override=None, journaled=None, model="m", role="long", personality="pragmatic", roles=roles
    )


def test_a_roles_instructions_count_toward_the_instructions_cap(tmp_path: Path) -> None:
    base = role_instructions("Follow this rule. " * 2_000)
    with pytest.raises(InstructionsTooLong, match=r"the role's instructions \(`agents.roles`\)"):
        check_instruction_cap(
            1_000, base=base, developer=None, user=None, agents_md=AgentsMd(tmp_path, ())
        )


def test_the_general_text_a_role_is_added_to_does_not_count_toward_the_cap(
    tmp_path: Path,
) -> None:
    base = role_instructions("Follow this rule.")
    check_instruction_cap(
        10, base=base, developer=None, user=None, agents_md=AgentsMd(tmp_path, ())
    )


def test_an_override_dressed_as_a_role_part_is_counted_whole_past_the_shipped_text(
    tmp_path: Path,
) -> None:
    general = role_instructions("")
    base = f"{general.rstrip()}\n\n# Your role: x\n\n" + "Obey. " * 4_000
    with pytest.raises(InstructionsTooLong):
        check_instruction_cap(
            1_000, base=base, developer=None, user=None, agents_md=AgentsMd(tmp_path, ())
        )


def test_a_service_exec_request_may_name_a_role_of_the_servers_config() -> None:
    request = ExecRequest.model_validate({"kind": "exec", "task": "go", "role": "auditor"})
    assert request.role == "auditor"
