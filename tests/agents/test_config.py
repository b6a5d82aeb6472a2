"""Loading corral's configuration from real files, a given environment and flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.agents._config import ConfigError, load_config
from corral.tools import ApprovalPolicy, SandboxMode
from tests.agents._config_files import load, load_error, trusting, write

# Each row adds one layer on top of the previous rows; the last one added must win.
LAYER_ORDER = [
    ("default", "gpt-5.4-mini", "default"),
    ("user", "user-model", "{home}/config.toml"),
    ("project", "project-model", "{project}/.corral/config.toml"),
    ("env", "env-model", "env CORRAL_MODEL"),
    ("cli_setting", "c-model", "flag -c model"),
    ("override", "flag-model", "flag --model"),
]


@pytest.mark.parametrize("upto", range(len(LAYER_ORDER)), ids=[r[0] for r in LAYER_ORDER])
def test_each_layer_overrides_the_one_before(upto: int, home: Path, project: Path) -> None:
    present = {name for name, _, _ in LAYER_ORDER[: upto + 1]}
    if "user" in present:
        write(home / "config.toml", 'model = "user-model"\n')
    if "project" in present:
        write(project / ".corral" / "config.toml", 'model = "project-model"\n')
    loaded = load(
        project / "src",
        home,
        env={"CORRAL_MODEL": "env-model"} if "env" in present else {},
        cli_settings=["model=c-model"] if "cli_setting" in present else [],
        overrides={"model": "flag-model" if "override" in present else None},
    )
    _, model, origin = LAYER_ORDER[upto]
    assert loaded.config.model == model
    assert loaded.origin("model") == origin.format(home=home, project=project)
    files = [kind for kind in ("user", "project") if kind in present]
    flags = ["flags"] if present & {"cli_setting", "override"} else []
    assert [layer.kind for layer in loaded.layers] == ["default", *files, "env", *flags]


def test_tables_merge_deeply_while_scalars_and_arrays_replace(home: Path, project: Path) -> None:
    write(
        home / "config.toml",
        "project_doc_fallback_filenames = ['A.md', 'B.md']\n"
        "[shell]\ndefault_timeout_ms = 5000\n"
        "[mcp_servers.docs]\ncommand = 'docs-server'\n" + trusting(project),
    )
    write(
        project / ".corral" / "config.toml",
        "project_doc_fallback_filenames = ['C.md']\n"
        "[shell]\noutput_max_tokens = 100\n"
        "[mcp_servers.docs]\nargs = ['--stdio']\n"
        "[mcp_servers.search]\nurl = 'http://127.0.0.1:9/mcp'\n",
    )
    loaded = load(project, home, cli_settings=["shell.max_timeout_ms=60000"])
    config = loaded.config
    assert (config.shell.default_timeout_ms, config.shell.max_timeout_ms) == (5000, 60_000)
    assert config.shell.output_max_tokens == 100
    assert config.project_doc_fallback_filenames == ("C.md",)
    assert config.mcp_servers["docs"].command == "docs-server"
    assert config.mcp_servers["docs"].args == ("--stdio",)
    assert config.mcp_servers["search"].transport == "streamable_http"
    assert loaded.origin("shell.default_timeout_ms") == str(home / "config.toml")
    assert loaded.origin("shell.max_timeout_ms") == "flag -c shell.max_timeout_ms"
    assert loaded.origin("shell.output_max_tokens") == str(project / ".corral" / "config.toml")


def test_nearest_project_file_up_to_the_git_root_is_read(
    tmp_path: Path, home: Path, project: Path
) -> None:
    write(tmp_path / ".corral" / "config.toml", 'model = "above-the-root"\n')
    write(project / ".corral" / "config.toml", 'model = "root"\n')
    assert load(project / "a" / "b", home).config.model == "root"
    write(project / "a" / ".corral" / "config.toml", 'model = "nearer"\n')
    assert load(project / "a" / "b", home).config.model == "nearer"


def test_without_a_root_marker_only_the_cwd_is_searched(tmp_path: Path, home: Path) -> None:
    write(tmp_path / "loose" / ".corral" / "config.toml", 'model = "parent"\n')
    assert load(tmp_path / "loose" / "sub", home).config.model == "gpt-5.4-mini"
    assert load(tmp_path / "loose", home).config.model == "parent"


def test_home_inside_the_project_is_read_once_and_resolved_from_the_cwd(project: Path) -> None:
    write(project / ".corral" / "config.toml", 'model = "shared"\n')
    loaded = load_config(cwd=project, env={"CORRAL_HOME": ".corral"})
    assert (loaded.config.home, loaded.config.model) == (project / ".corral", "shared")
    assert [layer.kind for layer in loaded.layers] == ["default", "user", "env"]


def test_codex_spelled_keys_are_accepted(home: Path, project: Path) -> None:
    write(home / "config.toml", trusting(project))
    write(
        project / ".corral" / "config.toml",
        'sandbox_mode = "danger-full-access"\n'
        'approval_policy = "on-request"\n'
        "[sandbox_workspace_write]\nwritable_roots = ['../shared']\nnetwork_access = true\n"
        "[agents]\nmax_threads = 3\nmax_depth = 2\n"
        "[mcp_servers.fs]\ncommand = 'npx'\nargs = ['-y', 'fs-server']\n"
        "env = { LOG = 'debug' }\ncwd = 'tools'\n",
    )
    config = load(project, home).config
    assert config.sandbox_mode is SandboxMode.FULL_ACCESS
    assert config.approval_policy is ApprovalPolicy.ON_REQUEST
    assert config.network_access is True
    assert config.writable_roots == (project / ".corral" / ".." / "shared",)
    assert (config.agents.max_threads, config.agents.max_depth) == (3, 2)
    server = config.mcp_servers["fs"]
    assert (server.command, server.args, server.env) == (
        "npx",
        ("-y", "fs-server"),
        {"LOG": "debug"},
    )
    assert (server.cwd, server.startup_timeout_sec, server.tool_timeout_sec) == (
        project / ".corral" / "tools",
        30.0,
        120.0,
    )


def test_environment_variables_set_endpoint_and_permissions(home: Path, project: Path) -> None:
    env = {
        "CORRAL_BASE_URL": "http://127.0.0.1:8000/v1",
        "OPENAI_BASE_URL": "https://ignored.example/v1",
        "CORRAL_API": "chat",
        "CORRAL_SANDBOX": "read-only",
        "CORRAL_APPROVAL_POLICY": "untrusted",
    }
    loaded = load(project, home, env=env)
    config = loaded.config
    assert (config.base_url, config.model_provider_api) == ("http://127.0.0.1:8000/v1", "chat")
    assert config.sandbox_mode is SandboxMode.READ_ONLY
    assert config.approval_policy is ApprovalPolicy.UNTRUSTED
    assert (config.home, loaded.origin("home")) == (home, "env CORRAL_HOME")
    assert loaded.origin("base_url") == "env CORRAL_BASE_URL"
    fallback = load(project, home, env={"OPENAI_BASE_URL": "http://localhost:1/v1"})
    assert fallback.origin("base_url") == "env OPENAI_BASE_URL"


def test_dash_c_values_parse_as_toml_and_fall_back_to_strings(home: Path, project: Path) -> None:
    config = load(
        project,
        home,
        cli_settings=[
            "model=gpt-5.4",
            "network_access=true",
            "request_max_retries = 0",
            'project_doc_fallback_filenames=["NOTES.md"]',
            'mcp_servers."a.b".url="http://127.0.0.1:9/mcp"',
            'prices."gpt-5.4" = { input_per_mtok = 1.25, output_per_mtok = 10 }',
        ],
    ).config
    assert (config.model, config.network_access, config.request_attempts) == ("gpt-5.4", True, 1)
    assert config.project_doc_fallback_filenames == ("NOTES.md",)
    assert config.mcp_servers["a.b"].url == "http://127.0.0.1:9/mcp"
    assert config.prices["gpt-5.4"].output_per_mtok == 10


def test_relative_instructions_file_is_read_from_beside_its_config(
    home: Path, project: Path
) -> None:
    write(project / ".corral" / "prompts" / "base.md", "You are a careful reviewer.\n")
    write(
        project / ".corral" / "config.toml",
        'model_instructions_file = "prompts/base.md"\n',
    )
    write(home / "config.toml", 'base_instructions = "overridden by the project file"\n')
    config = load(project / "src", home).config
    assert config.model_instructions_file == project / ".corral" / "prompts" / "base.md"
    assert config.base_instructions == "You are a careful reviewer.\n"


def test_auto_compact_limit_is_the_setting_capped_at_90_percent_of_the_window(
    home: Path, project: Path
) -> None:
    assert load(project, home).config.auto_compact_token_limit == 244_800
    capped = load(project, home, cli_settings=["model_auto_compact_token_limit=900000"])
    assert capped.config.auto_compact_token_limit == 244_800
    lower = load(project, home, cli_settings=["model_auto_compact_token_limit=100000"])
    assert lower.config.auto_compact_token_limit == 100_000


def test_origin_of_an_unknown_key_is_a_key_error(home: Path, project: Path) -> None:
    loaded = load(project, home)
    assert loaded.origin("mcp_servers.any.env.ANY") == "default"
    with pytest.raises(KeyError):
        loaded.origin("shell.timeout")


# -- error messages ------------------------------------------------------------------------


def test_bad_value_names_file_key_value_and_choices(home: Path, project: Path) -> None:
    write(home / "config.toml", trusting(project))
    path = write(project / ".corral" / "config.toml", 'sandbox_mode = "rw"\n')
    assert load_error(project, home) == (
        f'{path}: sandbox_mode = "rw" is not allowed; '
        "use one of read-only, workspace-write, full-access"
    )


def test_bad_environment_variable_is_named(home: Path, project: Path) -> None:
    assert load_error(project, home, env={"CORRAL_API": "grpc"}) == (
        'environment variable CORRAL_API: model_provider_api = "grpc" is not allowed; '
        "use one of responses, chat"
    )


def test_out_of_range_flag_is_named(home: Path, project: Path) -> None:
    assert load_error(project, home, overrides={"request_max_retries": 500}) == (
        "flag --request-max-retries: request_max_retries = 500 is not allowed: "
        "input should be less than or equal to 100"
    )


def test_unknown_key_names_the_key_the_file_and_a_close_match(home: Path, project: Path) -> None:
    path = write(project / ".corral" / "config.toml", 'modle = "x"\n[shell]\ntimeout_ms = 5\n')
    assert load_error(project, home) == (
        f"unknown key `shell.timeout_ms` in {path}; did you mean `shell.max_timeout_ms`?\n"
        f"unknown key `modle` in {path}; did you mean `model`?"
    )


def test_syntax_error_gives_file_line_and_column(home: Path, project: Path) -> None:
    path = write(home / "config.toml", 'model = "x"\n[shell\n')
    assert load_error(project, home) == (
        f"{path}: invalid TOML: Expected ']' at the end of a table declaration "
        "(at line 2, column 7)"
    )


def test_missing_instructions_file_is_named(home: Path, project: Path) -> None:
    path = write(home / "config.toml", 'model_instructions_file = "base.md"\n')
    assert load_error(project, home) == (
        f'{path}: model_instructions_file = "{home / "base.md"}": no such file; '
        "create it or point the key at an existing file"
    )


def test_mcp_server_with_both_command_and_url_is_refused(home: Path, project: Path) -> None:
    write(home / "config.toml", trusting(project))
    path = write(
        project / ".corral" / "config.toml",
        "[mcp_servers.docs]\ncommand = 'docs'\nurl = 'http://127.0.0.1:9/mcp'\n",
    )
    assert load_error(project, home) == (
        f"{path}: mcp_servers.docs: both `command` and `url` are set; keep `command` for a "
        "stdio server or `url` for a streamable HTTP server"
    )


def test_home_cannot_be_set_from_a_file(home: Path, project: Path) -> None:
    path = write(project / ".corral" / "config.toml", 'home = "/elsewhere"\n')
    assert load_error(project, home) == (
        f"{path}: `home` cannot be set here; set CORRAL_HOME instead"
    )


def test_a_role_of_your_own_reads_its_instructions_file_beside_the_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "security.md").write_text("You audit code for injection bugs.")
    (home / "config.toml").write_text(
        '[agents.roles.security]\ndescription = "audits"\ninstructions_file = "security.md"\n'
        'sandbox_mode = "read-only"\n'
    )
    config = load_config(cwd=tmp_path, env={"CORRAL_HOME": str(home)}).config
    role = config.agents.roles["security"]
    assert role.read_instructions() == "You audit code for injection bugs."
    assert role.sandbox_mode == "read-only"


def test_a_role_with_both_instructions_and_a_file_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[agents.roles.x]\ninstructions = "a"\ninstructions_file = "b.md"\n'
    )
    with pytest.raises(ConfigError, match="not both"):
        load_config(cwd=tmp_path, env={"CORRAL_HOME": str(home)})
