"""Codex's `[agents.NAME]` role tables as people write them: translated into corral's roles where
the meaning is the same (description, model, sandbox_mode, developer_instructions, inline or in a
`config_file`), skipped whole where corral cannot honour them safely, and never a way for a
project to read a file outside its `.corral/` folder."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from corral.agents import RoleConfig
from corral.tools import SandboxMode
from tests.agents._config_files import load, write

EXPLORER = """
model = "gpt-5.4-mini"
model_reasoning_effort = "low"
sandbox_mode = "read-only"
developer_instructions = "Answer questions about the code; change nothing."
"""


def role_of(home: Path, project: Path, name: str) -> RoleConfig | None:
    return load(project, home).config.agents.roles.get(name)


def warning_line(caplog: pytest.LogCaptureFixture) -> str:
    (line,) = [r.getMessage() for r in caplog.records if "ignored Codex settings" in r.getMessage()]
    return line


def test_a_codex_role_with_a_config_file_becomes_a_corral_role(
    home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(home / "agents" / "explorer.toml", EXPLORER)
    table = '[agents.explorer]\ndescription = "reads code"\nconfig_file = "agents/explorer.toml"\n'
    write(home / "config.toml", table + 'nickname_candidates = ["Scout"]\n')
    caplog.set_level(logging.WARNING, logger="corral.config")
    role = role_of(home, project, "explorer")
    assert role == RoleConfig(
        description="reads code",
        instructions="Answer questions about the code; change nothing.",
        model="gpt-5.4-mini",
        sandbox_mode=SandboxMode.READ_ONLY,
    )
    assert warning_line(caplog).endswith(
        "agents.explorer.model_reasoning_effort, agents.explorer.nickname_candidates"
    )


def test_a_codex_role_with_its_settings_inline_becomes_a_corral_role(
    home: Path, project: Path
) -> None:
    write(
        home / "config.toml",
        '[agents.researcher]\ndescription = "gathers evidence"\nmodel = "gpt-5.3-codex"\n'
        'web_search = "live"\nsandbox_mode = "danger-full-access"\n'
        'developer_instructions = "Cite primary sources."\n',
    )
    role = role_of(home, project, "researcher")
    assert role is not None
    assert (role.model, role.sandbox_mode) == ("gpt-5.3-codex", SandboxMode.FULL_ACCESS)
    assert role.instructions == "Cite primary sources."


@pytest.mark.parametrize(
    "settings",
    [
        'approval_policy = "untrusted"\n',
        "[sandbox_workspace_write]\nnetwork_access = false\n",
        'default_permissions = ":read-only"\n',
        "network_access = false\n",
        '[mcp_servers.x]\ncommand = "x"\n',
        'model_provider = "elsewhere"\n',
    ],
)
def test_a_codex_role_setting_what_corral_cannot_honour_is_skipped_whole(
    home: Path, project: Path, settings: str, caplog: pytest.LogCaptureFixture
) -> None:
    write(home / "agents" / "careful.toml", 'developer_instructions = "be careful"\n' + settings)
    write(home / "config.toml", '[agents.careful]\nconfig_file = "agents/careful.toml"\n')
    caplog.set_level(logging.WARNING, logger="corral.config")
    assert role_of(home, project, "careful") is None
    assert warning_line(caplog).endswith(
        "ignored Codex settings corral does not use: agents.careful"
    )


@pytest.mark.parametrize(
    "config_file", ["/etc/codex/agents/missing.toml", "agents/missing.toml", "agents", ""]
)
def test_a_codex_role_whose_config_file_cannot_be_read_is_skipped_and_the_config_loads(
    home: Path, project: Path, config_file: str
) -> None:
    (home / "agents").mkdir(parents=True)
    write(home / "config.toml", f'[agents.style]\nconfig_file = "{config_file}"\n')
    assert role_of(home, project, "style") is None


@pytest.mark.parametrize("name", ["reviewer", "general", "Code-Style", "has space"])
def test_a_codex_role_whose_name_corral_cannot_take_is_skipped(
    home: Path, project: Path, name: str
) -> None:
    write(home / "config.toml", f'[agents."{name}"]\ndescription = "x"\n')
    assert name not in load(project, home).config.agents.roles


def test_a_codex_role_and_a_corral_role_of_one_name_keep_the_corral_one(
    home: Path, project: Path
) -> None:
    write(
        home / "config.toml",
        '[agents.roles.docs]\ninstructions = "corral"\n'
        '[agents.docs]\ndeveloper_instructions = "x"\n',
    )
    role = role_of(home, project, "docs")
    assert role is not None and role.instructions == "corral"


@pytest.mark.parametrize("outside", ["../../secret.toml", "{secret}", "link.toml"])
def test_an_untrusted_projects_codex_role_file_outside_its_corral_folder_is_never_read(
    home: Path, project: Path, tmp_path: Path, outside: str
) -> None:
    secret = write(tmp_path / "secret.toml", 'developer_instructions = "SECRET-ROLE-TEXT"\n')
    (project / ".corral").mkdir()
    (project / ".corral" / "link.toml").symlink_to(secret)
    path = outside.format(secret=secret)
    write(project / ".corral" / "config.toml", f'[agents.spy]\nconfig_file = "{path}"\n')
    config = load(project, home).config
    assert "spy" not in config.agents.roles
    assert "SECRET-ROLE-TEXT" not in config.model_dump_json()


def test_an_untrusted_projects_codex_role_keeps_its_text_but_not_its_sandbox(
    home: Path, project: Path
) -> None:
    write(
        project / ".corral" / "agents" / "docs.toml",
        EXPLORER.replace("read-only", "danger-full-access"),
    )
    write(project / ".corral" / "config.toml", '[agents.docs]\nconfig_file = "agents/docs.toml"\n')
    role = role_of(home, project, "docs")
    assert role is not None
    assert role.instructions == "Answer questions about the code; change nothing."
    assert role.sandbox_mode is None, "a project's sandbox_mode applies only once trusted"
