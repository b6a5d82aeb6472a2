"""Real Codex `config.toml` files, and Codex's keys, as corral reads them.

The files under `tests/data/codex_configs/` were published in public repositories (see its
SOURCE.md). Each must load as the user's file and as a project's, warning once about the keys
corral skips; the keys corral uses must mean what they mean in Codex.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

from corral.agents._assembly import model_settings_from_config
from corral.agents._config import AgentsConfig, ConfigError
from corral.agents._items import Message
from corral.agents.model import ModelRequest, open_model_client
from corral.orchestrator._run import AgentServices, assemble_agent
from corral.orchestrator.model_server import serve_model_server
from corral.orchestrator.runs import build_root_spec
from corral.tools import SandboxMode, ToolCall, ToolContext, ToolServices
from corral.tools._sandbox import RecordingSandbox
from tests.agents._config_files import load, write

CONFIGS = sorted((Path(__file__).parents[1] / "data" / "codex_configs").glob("*.toml"))
TEST_DEADLINE = 20


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_at_least_eight_real_configs_are_collected() -> None:
    assert len(CONFIGS) >= 8
    sources = (CONFIGS[0].parent / "SOURCE.md").read_text()
    assert all(f"`{path.name}`" in sources for path in CONFIGS)


@pytest.mark.parametrize("source", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_a_real_codex_config_loads_as_the_users_file_with_one_warning_line(
    source: Path, home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(home / "config.toml", source.read_text())
    caplog.set_level(logging.WARNING, logger="corral.config")
    loaded = load(project, home)
    skipped = [w for w in warnings_of(caplog) if "ignored Codex settings" in w]
    assert len(skipped) == (1 if loaded.layers[1].ignored else 0)
    assert all("\n" not in w for w in skipped)
    for name in loaded.layers[1].ignored:
        assert name in skipped[0]


@pytest.mark.parametrize("source", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_a_real_codex_config_loads_as_an_untrusted_project_file(
    source: Path, home: Path, project: Path
) -> None:
    write(project / ".corral" / "config.toml", source.read_text())
    loaded = load(project, home)
    assert loaded.project is not None and loaded.project.verdict == "untrusted"
    assert loaded.config.sandbox_mode is SandboxMode.WORKSPACE_WRITE
    assert loaded.config.base_url is None


def test_the_warning_names_codex_keys_once_even_when_the_config_loads_twice(
    home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(home / "config.toml", "[features]\nx = true\n[notice]\nhide = true\n[tui]\ny = 1\n")
    caplog.set_level(logging.WARNING, logger="corral.config")
    load(project, home)
    load(project, home)
    (line,) = [w for w in warnings_of(caplog) if "ignored Codex settings" in w]
    assert line.endswith("ignored Codex settings corral does not use: features, notice, tui")


def test_codex_keys_inside_tables_corral_reads_are_skipped_by_name(
    home: Path, project: Path
) -> None:
    text = (
        "[agents]\nenabled = true\nmax_concurrent_threads_per_session = 3\n"
        '[agents.reviewer]\ndescription = "a Codex role"\n'
        "[sandbox_workspace_write]\nexclude_slash_tmp = true\n"
        '[mcp_servers.docs]\ncommand = "docs"\nstartup_timeout_ms = 2500\n'
        '[mcp_servers.docs.tools.search]\napproval_mode = "approve"\n'
    )
    write(home / "config.toml", text)
    loaded = load(project, home)
    assert loaded.layers[1].ignored == (
        "agents.enabled",
        "agents.reviewer",
        "sandbox_workspace_write.exclude_slash_tmp",
    )
    assert loaded.config.agents.max_threads == 3
    assert loaded.config.mcp_servers["docs"].startup_timeout_sec == 2.5
    assert loaded.config.mcp_servers["docs"].approval_mode("search") == "approve", (
        "read, not skipped"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('modle = "x"\n', "did you mean `model`?"),
        ("[agents]\nmax_thread = 2\n", "did you mean `agents.max_threads`?"),
    ],
)
def test_a_mistyped_corral_key_still_fails_with_a_close_suggestion(
    text: str, message: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", text)
    with pytest.raises(ConfigError, match="unknown key") as caught:
        load(project, home)
    assert message in str(caught.value)


@pytest.mark.parametrize("text", ["noticed = true\n", "telemetry = 1\n", "colour = 1\n"])
def test_an_unknown_key_far_from_every_corral_key_gets_no_suggestion(
    text: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", text)
    with pytest.raises(ConfigError, match="unknown key") as caught:
        load(project, home)
    assert "did you mean" not in str(caught.value)


PROVIDERS = """
model_provider = "local"
[model_providers.local]
name = "Local"
base_url = "http://127.0.0.1:18081/v1/"
env_key = "LOCAL_KEY"
wire_api = "chat"
requires_openai_auth = false
[model_providers.remote]
base_url = "https://remote.example/v1"
env_key = "REMOTE_KEY"
[profiles.far]
model = "far-model"
model_provider = "remote"
model_reasoning_effort = "low"
model_verbosity = "high"
"""


def test_model_provider_selects_the_endpoint_key_variable_and_wire_api(
    home: Path, project: Path
) -> None:
    write(home / "config.toml", PROVIDERS)
    loaded = load(project, home)
    config = loaded.config
    assert config.base_url == "http://127.0.0.1:18081/v1/"
    assert config.model_api_key_env == "LOCAL_KEY"
    assert config.model_provider_api == "chat"
    assert config.key_endpoints is not None
    assert "http://127.0.0.1:18081/v1" in config.key_endpoints
    assert loaded.origin("base_url") == str(home / "config.toml")


def test_a_key_set_itself_wins_over_the_providers(home: Path, project: Path) -> None:
    write(home / "config.toml", PROVIDERS)
    config = load(project, home, overrides={"base_url": "http://127.0.0.1:9/v1"}).config
    assert config.base_url == "http://127.0.0.1:9/v1"
    assert config.model_api_key_env == "LOCAL_KEY"


def test_a_profile_lays_its_keys_over_the_file_and_loses_to_flags(
    home: Path, project: Path
) -> None:
    write(home / "config.toml", PROVIDERS)
    loaded = load(project, home, overrides={"profile": "far"})
    assert loaded.config.model == "far-model"
    assert loaded.config.base_url == "https://remote.example/v1"
    assert loaded.config.model_reasoning_effort == "low"
    assert loaded.origin("model").startswith("profile far in ")
    flagged = load(project, home, overrides={"profile": "far", "model": "flag-model"})
    assert flagged.config.model == "flag-model"


def test_a_profile_can_be_chosen_in_the_file(home: Path, project: Path) -> None:
    write(home / "config.toml", 'profile = "far"\n' + PROVIDERS)
    assert load(project, home).config.model == "far-model"


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        (PROVIDERS, {"profile": "nope"}, "no [profiles.nope] table defines it"),
        ('model_provider = "ghost"\n', {}, "no [model_providers.ghost] table"),
    ],
)
def test_a_missing_profile_or_provider_is_a_clear_error(
    text: str, overrides: dict[str, Any], message: str, home: Path, project: Path
) -> None:
    write(home / "config.toml", text)
    with pytest.raises(ConfigError) as caught:
        load(project, home, overrides=overrides)
    assert message in str(caught.value)


def test_model_provider_openai_needs_no_table(home: Path, project: Path) -> None:
    write(home / "config.toml", 'model_provider = "openai"\n')
    assert load(project, home).config.base_url is None


def test_an_untrusted_project_cannot_pick_a_provider_or_profile(
    home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(home / "config.toml", PROVIDERS.replace('model_provider = "local"', ""))
    write(project / ".corral" / "config.toml", 'profile = "far"\nmodel_provider = "remote"\n')
    caplog.set_level(logging.WARNING, logger="corral.config")
    config = load(project, home).config
    assert config.base_url is None and config.model != "far-model"
    (trust,) = [w for w in warnings_of(caplog) if "not trusted" in w]
    assert "profile" in trust and "model_provider" in trust


def test_codex_flags_are_skipped_too(home: Path, project: Path) -> None:
    loaded = load(project, home, cli_settings=["features.rmcp_client=true", "model=m"])
    assert loaded.config.model == "m"
    assert loaded.layers[-1].ignored == ("features",)


@pytest.mark.anyio
async def test_model_reasoning_effort_is_sent_with_every_request(home: Path, project: Path) -> None:
    write(home / "config.toml", 'model_reasoning_effort = "xhigh"\n')
    with anyio.fail_after(TEST_DEADLINE):
        async with serve_model_server(lambda request: []) as server:
            config = load(project, home, overrides={"base_url": server.base_url}).config
            settings = model_settings_from_config(config, {})
            client = open_model_client(settings)
            try:
                request = ModelRequest(
                    model=config.model, instructions="", input=[Message(role="user", text="hi")]
                )
                await client.complete(request)
            finally:
                await client.aclose()
            body = server.requests[0]["body"]
    assert body["reasoning"] == {"effort": "xhigh"}


@pytest.mark.anyio
async def test_shell_environment_policy_set_reaches_every_command_and_inherit_is_skipped(
    home: Path, project: Path
) -> None:
    text = '[shell_environment_policy]\ninherit = "all"\nset = { CI = "1", KUBECONFIG = "/k" }\n'
    write(home / "config.toml", text)
    loaded = load(project, home, overrides={"base_url": "http://127.0.0.1:9/v1"})
    assert loaded.layers[1].ignored == ("shell_environment_policy.inherit",)
    spec = build_root_spec(loaded.config, cwd=project, env={}, run_id="run-1", role="general")
    agent = assemble_agent(spec, AgentServices(agents=AgentsConfig(), providers={}))
    sandbox = RecordingSandbox()
    ctx = ToolContext(cwd=project, profile=spec.profile, services=ToolServices(sandbox=sandbox))
    call = ToolCall("call-1", "shell", json.dumps({"command": ["env"]}))
    await agent.registry.dispatch(call, ctx)
    assert sandbox.calls[0].env == {"CI": "1", "KUBECONFIG": "/k"}


@pytest.mark.parametrize("name", ["1BAD", "A=B", "", "PATH "])
def test_a_variable_name_that_cannot_exist_is_refused(name: str, home: Path, project: Path) -> None:
    write(home / "config.toml", f"[shell_environment_policy.set]\n{json.dumps(name)} = 'x'\n")
    with pytest.raises(ConfigError, match="is not a variable name"):
        load(project, home)
