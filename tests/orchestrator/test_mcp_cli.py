"""`corral mcp list`: servers from the project's config, started for real, shown as text or JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from corral.orchestrator.cli._main import main
from corral.orchestrator.cli._mcp import format_statuses
from corral.orchestrator.services.mcp import McpServerStatus, ServerState

from .mcp_servers import DYNAMIC_SERVER


def write_project_config(project: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".corral").mkdir()
    (project / ".corral" / "config.toml").write_text(text)
    # MCP servers widen power: they apply from a project the user trusted.
    (project / "home").mkdir()
    trust = f'[projects."{project.resolve()}"]\ntrust_level = "trusted"\n'
    (project / "home" / "config.toml").write_text(trust)
    monkeypatch.chdir(project)
    monkeypatch.setenv("CORRAL_HOME", str(project / "home"))


def test_mcp_list_json_shows_each_servers_state_and_exposed_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = f"""
[mcp_servers.dyn]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(DYNAMIC_SERVER))}]

[mcp_servers.gone]
command = "corral-no-such-mcp-server"
"""
    write_project_config(tmp_path, config, monkeypatch)
    assert main(["mcp", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [entry["name"] for entry in listed] == ["dyn", "gone"]
    dyn, gone = listed
    assert dyn["state"] == "ready" and dyn["transport"] == "stdio" and "error" not in dyn
    assert dyn["tools"] == [
        "mcp__dyn__add_tool",
        "mcp__dyn__echo",
        "mcp__dyn__pid",
        "mcp__dyn__remove_tool",
        "mcp__dyn__trace",
    ]
    assert gone["state"] == "failed" and gone["tools"] == []
    assert gone["error"] == (
        "command 'corral-no-such-mcp-server' was not found; check `command` (and PATH)"
    )


def test_a_malformed_mcp_table_is_a_clear_error_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = '[mcp_servers.broken]\ncommand = "x"\nurl = "http://127.0.0.1:9/mcp"\n'
    write_project_config(tmp_path, config, monkeypatch)
    assert main(["mcp", "list"]) == 2
    err = capsys.readouterr().err
    assert "corral mcp: error:" in err and "mcp_servers.broken" in err
    assert "both `command` and `url` are set" in err
    assert "Traceback" not in err


def test_the_text_listing_shows_states_errors_and_tools() -> None:
    statuses = [
        McpServerStatus("git", ServerState.READY, "stdio", ("mcp__git__git_status",)),
        McpServerStatus("web", ServerState.FAILED, "streamable_http", (), error="refused"),
    ]
    assert format_statuses(statuses).splitlines() == [
        "git  ready       stdio            1 tool",
        "  mcp__git__git_status",
        "web  failed      streamable_http  0 tools",
        "  error: refused",
    ]
    assert format_statuses([]).startswith("no MCP servers are configured")
