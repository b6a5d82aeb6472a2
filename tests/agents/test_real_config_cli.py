"""A Codex user's whole `config.toml`, in the shapes found in the wild, through the real CLI.

The file (written afresh here) mixes what people carry: a proxy provider, profiles, Codex's
`[otel]` exporter table, `default_permissions`, feature flags, hooks with display keys, MCP
servers with Claude Code's `type`, `[[skills.config]]`, keys of old and new releases. `corral mcp
list` must run (exit 0) with one warning line naming what was skipped and no traceback; a bad
value must be one line naming the file and key, exit 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e._cli import corral_env, run_corral

USER_CONFIG = """\
model = "gpt-5.1-codex"
model_provider = "relay"
model_reasoning_effort = "high"
model_reasoning_summary = "detailed"
model_verbosity = "low"
approval_policy = "on-request"
default_permissions = ":workspace"
disable_response_storage = true
network_access = "enabled"
notify = ["notify-send", "codex"]
file_opener = "cursor"
check_for_update_on_startup = false

[model_providers.relay]
name = "Relay"
base_url = "http://127.0.0.1:9/v1"
env_key = "RELAY_KEY"
wire_api = "responses"
requires_openai_auth = false
query_params = { team = "core" }

[profiles.deep]
model = "gpt-5.1"
model_reasoning_effort = "xhigh"
default_permissions = ":read-only"

[features]
unified_exec = true
rmcp_client = true

[tui]
notifications = ["agent-turn-complete"]

[otel]
environment = "laptop"
exporter = { otlp-http = { endpoint = "http://127.0.0.1:9/v1/logs", protocol = "binary" } }

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "true"
statusMessage = "Wrapping up"

[mcp_servers.files]
type = "stdio"
command = "files-server"
args = ["--root", "."]
env_vars = ["HOME", { name = "FILES_TOKEN", source = "local" }]
startup_timeout_ms = 15000
enabled = false

[mcp_servers.search]
url = "http://127.0.0.1:9/mcp"
bearer_token_env_var = "SEARCH_TOKEN"
scopes = ["read"]
enabled = false

[[skills.config]]
path = "skills/old/SKILL.md"
enabled = false

[memories]
use_memories = false

[projects."/srv/checkouts/site"]
trust_level = "trusted"
"""


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home" / ".corral", tmp_path / "project"
    home.mkdir(parents=True)
    (project / ".git").mkdir(parents=True)
    return home, project


@pytest.mark.anyio
async def test_a_whole_codex_config_runs_with_one_warning_line(places: tuple[Path, Path]) -> None:
    home, project = places
    (home / "config.toml").write_text(USER_CONFIG)
    done = await run_corral(["mcp", "list"], env=corral_env(home), cwd=project)
    assert done.code == 0, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [ln for ln in done.stderr.splitlines() if "ignored Codex settings" in ln]
    for skipped in ("disable_response_storage", "features", "otel.environment", "tui"):
        assert skipped in line
    assert "files" in done.stdout and "search" in done.stdout


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("top", "table", "line"),
    [
        ('sandbox_mode = "sandboxed"\n', "", 'sandbox_mode = "sandboxed" is not allowed; use one'),
        ('default_permissions = "mine"\n', "", 'default_permissions = "mine": corral cannot'),
        ("", "[mcp_servers.x]\ncommand = 3\n", "mcp_servers.x.command = 3 is not allowed"),
    ],
)
async def test_a_bad_value_in_it_is_one_line_with_the_file_and_key_and_exit_2(
    top: str, table: str, line: str, places: tuple[Path, Path]
) -> None:
    home, project = places
    body = USER_CONFIG.replace('default_permissions = ":workspace"\n', "")
    (home / "config.toml").write_text(f"{top}{body}\n{table}")
    done = await run_corral(["mcp", "list"], env=corral_env(home), cwd=project)
    assert done.code == 2
    errors = [ln for ln in done.stderr.splitlines() if "WARNING" not in ln]
    assert len(errors) == 1 and str(home / "config.toml") in errors[0] and line in errors[0]
    assert "Traceback" not in done.stderr
