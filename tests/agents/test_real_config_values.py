"""Values as people write them in corral's own keys and Codex's: a Codex spelling inside a
table corral reads, and a single value where an array or a table belongs.

A spelling Codex accepts means what it means there; a value of the wrong shape is one line
naming the file and the key, showing the shape to write instead, and exits 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents._config import write_trust
from corral.tools import SandboxMode
from tests.agents._config_files import load, load_error, write


def test_a_roles_sandbox_mode_takes_codexs_danger_full_access_spelling(
    home: Path, project: Path
) -> None:
    write(home / "config.toml", '[agents.roles.ops]\nsandbox_mode = "danger-full-access"\n')
    role = load(project, home).config.agents.roles["ops"]
    assert role.sandbox_mode is SandboxMode.FULL_ACCESS


@pytest.mark.parametrize(("word", "meant"), [("enabled", True), ("restricted", False)])
def test_network_access_as_a_word_in_the_sandbox_table_means_what_it_says(
    word: str, meant: bool, home: Path, project: Path
) -> None:
    write(home / "config.toml", f'[sandbox_workspace_write]\nnetwork_access = "{word}"\n')
    assert load(project, home).config.network_access is meant


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('writable_roots = "/srv/data"\n', 'use an array, e.g. writable_roots = ["/srv/data"]'),
        (
            'project_doc_fallback_filenames = "CLAUDE.md"\n',
            'use an array, e.g. project_doc_fallback_filenames = ["CLAUDE.md"]',
        ),
        (
            '[mcp_servers.docs]\ncommand = "docs-server"\nargs = "--stdio"\n',
            'use an array, e.g. mcp_servers.docs.args = ["--stdio"]',
        ),
        (
            '[mcp_servers.docs]\ncommand = "docs-server"\nenabled_tools = 3\n',
            'use an array, e.g. mcp_servers.docs.enabled_tools = ["..."]',
        ),
        (
            '[mcp_servers]\ndocs = "npx docs-server"\n',
            "use a table, e.g. [mcp_servers.docs] followed by its keys",
        ),
        ("mcp_servers = []\n", "use a table, e.g. [mcp_servers] followed by its keys"),
        (
            '[hooks]\nPreToolUse = "./check.sh"\n',
            "use an array of tables, e.g. [[hooks.PreToolUse]] followed by its keys",
        ),
        (
            '[shell_environment_policy]\nset = "CI=1"\n',
            "use a table, e.g. [shell_environment_policy.set] followed by its keys",
        ),
    ],
)
def test_a_single_value_where_an_array_or_table_belongs_says_what_to_write(
    text: str, line: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", text)
    message = load_error(project, home)
    assert message.startswith(f"{home / 'config.toml'}: ")
    assert message.endswith(line) and "\n" not in message


@pytest.mark.parametrize(
    "data",
    [
        b'\xef\xbb\xbfmodel = "gpt-5"\r\n[shell]\r\ndefault_timeout_ms = 5000\r\n',
        b'model = "gpt-5"\r\n[shell]\r\ndefault_timeout_ms = 5000\r\n',
    ],
    ids=["bom-crlf", "crlf"],
)
def test_a_config_saved_with_a_bom_or_crlf_line_ends_loads(
    data: bytes, home: Path, project: Path
) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_bytes(data)
    config = load(project, home).config
    assert (config.model, config.shell.default_timeout_ms) == ("gpt-5", 5000)


def test_a_config_that_is_not_utf8_names_the_file_and_the_byte(home: Path, project: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_bytes(b'model = "caf\xe9"\n')
    message = load_error(project, home)
    assert message.startswith(f"{home / 'config.toml'}: not UTF-8 text")
    assert "\n" not in message


def test_trust_is_written_into_a_user_file_saved_with_a_bom(home: Path, project: Path) -> None:
    home.mkdir(parents=True)
    user = home / "config.toml"
    user.write_bytes(b'\xef\xbb\xbfmodel = "gpt-5"\r\n')
    write(project / ".corral" / "config.toml", 'sandbox_mode = "read-only"\n')
    write_trust(user, project.resolve(), "sha256:abc")
    assert user.read_bytes().startswith(b'\xef\xbb\xbfmodel = "gpt-5"')
    loaded = load(project, home)
    assert loaded.config.projects[str(project.resolve())].trusted_hash == "sha256:abc"


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        (
            '[agents.roles.x]\ndescription = "d"\nsandbox = "read-only"\n',
            "agents.roles.x.sandbox_mode",
        ),
        ("[shell]\nmax_timeout = 5000\n", "shell.max_timeout_ms"),
    ],
)
def test_a_key_that_is_the_first_words_of_one_allowed_key_suggests_it(
    text: str, meant: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", text)
    assert load_error(project, home).endswith(f"did you mean `{meant}`?")
