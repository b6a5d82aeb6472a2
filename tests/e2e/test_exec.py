"""`corral exec` and `corral resume` end to end: the real CLI, the real SDK, real HTTP."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from corral.orchestrator.model_server import RunningModelServer, canonical_bytes, serve_model_server

from ._cli import corral_env, run_corral

pytestmark = pytest.mark.anyio

Policy = Callable[[dict[str, Any]], Any]


def texts(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of every message of a logged request, in order."""
    out = []
    for item in record["normalised"]["input"]:
        if item.get("type") == "message":
            text = "".join(p.get("text", "") for p in item["content"])
            out.append((item["role"], text))
    return out


def shell_call(call_id: str, command: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "shell",
        "arguments": json.dumps({"command": command}),
    }


def outputs(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in request["input"] if i.get("type") == "function_call_output"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rules: run the tests\n")
    (root / "pkg" / "sub" / "AGENTS.md").write_text("sub rules: keep it small\n")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


async def serve(policy: Policy) -> AsyncIterator[RunningModelServer]:
    async with serve_model_server(policy) as server:
        yield server


def two_steps(request: dict[str, Any]) -> Any:
    done = outputs(request)
    if len(done) == 0:
        return [shell_call("c1", "echo one")]
    if len(done) == 1:
        return [shell_call("c2", "echo two")]
    return "finished after two commands"


async def test_exec_prints_the_final_message_and_sends_the_codex_layout(
    workspace: Path, home: Path
) -> None:
    async with serve_model_server(lambda r: "hello from the model") as server:
        cwd = workspace / "pkg" / "sub"
        result = await run_corral(
            ["exec", "say hi"], env=corral_env(home, server.base_url), cwd=cwd
        )
        assert result.code == 0, result.stderr
        assert result.stdout.strip() == "hello from the model"
        (request,) = server.requests
    roles = texts(request)
    assert roles[0][0] == "developer" and roles[0][1].startswith("<permissions instructions>")
    agents_md = roles[1][1]
    assert roles[1][0] == "user" and agents_md.startswith(f"# AGENTS.md instructions for {cwd}")
    root_at = agents_md.index(f"<!-- source: {workspace / 'AGENTS.md'} -->")
    sub_at = agents_md.index(f"<!-- source: {cwd / 'AGENTS.md'} -->")
    assert root_at < sub_at, "AGENTS.md parts run from the git root down to the cwd"
    assert "root rules" in agents_md and "sub rules" in agents_md
    assert roles[2][1].startswith("<environment_context>") and f"<cwd>{cwd}</cwd>" in roles[2][1]
    assert roles[3] == ("user", "say hi")
    assert request["prompt_cache_key"], "every request carries the agent's cache key"
    assert request["normalised"]["instructions"].strip()


async def test_agents_md_is_capped_at_32_kib_with_a_visible_marker(
    workspace: Path, home: Path
) -> None:
    (workspace / "AGENTS.md").write_text("x" * 40_000 + "\n")
    # What is kept is 32 KiB, 8,192 tokens: the default instructions cap lets it through.
    async with serve_model_server(lambda r: "ok") as server:
        result = await run_corral(
            ["exec", "go"], env=corral_env(home, server.base_url), cwd=workspace
        )
        assert result.code == 0, result.stderr
        agents_md = texts(server.requests[0])[1][1]
    assert "truncated" in agents_md
    assert agents_md.count("x") <= 32 * 1024
    assert "sub rules" not in agents_md, "only folders from the root down to the cwd count"


async def test_instructions_over_the_cap_are_refused_naming_the_file_before_any_request(
    workspace: Path, home: Path
) -> None:
    big = workspace / "pkg" / "sub" / "AGENTS.md"
    big.write_text("rule\n" * 3_000)
    async with serve_model_server(lambda r: "ok") as server:
        result = await run_corral(
            ["exec", "-c", "instructions_max_tokens=2000", "go"],
            env=corral_env(home, server.base_url),
            cwd=big.parent,
        )
        assert not server.requests
    assert result.code == 2
    assert "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "error:" in line]
    assert str(big) in line and "2,000-token cap" in line and "instructions_max_tokens" in line


async def test_status_shows_the_sha256_version_of_the_instructions_the_agent_was_sent(
    workspace: Path, home: Path
) -> None:
    async with serve_model_server(lambda r: "ok") as server:
        env = corral_env(home, server.base_url)
        done = await run_corral(["exec", "--run-id", "run-v", "go"], env=env, cwd=workspace)
        assert done.code == 0, done.stderr
        sent = server.requests[0]["normalised"]["instructions"]
    status = await run_corral(["status", "run-v", "--json"], env=env, cwd=workspace)
    exported = await run_corral(["export", "run-v"], env=env, cwd=workspace)

    version = "sha256:" + hashlib.sha256(sent.encode()).hexdigest()
    assert [a["prompt_version"] for a in json.loads(status.stdout)["agents"]] == [version]
    events = [json.loads(line) for line in exported.stdout.splitlines()]
    started = [e for e in events if e.get("kind") == "agent_started"]
    assert [e["payload"]["prompt_version"] for e in started] == [version]


async def test_every_request_extends_the_previous_one_byte_for_byte(
    workspace: Path, home: Path
) -> None:
    async with serve_model_server(two_steps) as server:
        result = await run_corral(
            ["exec", "run two commands"], env=corral_env(home, server.base_url), cwd=workspace
        )
        assert result.code == 0, result.stderr
        requests = list(server.requests)
        stats = server.stats()
    assert len(requests) == 3
    keys = {r["prompt_cache_key"] for r in requests}
    assert len(keys) == 1 and None not in keys
    sizes = [len(canonical_bytes(r["normalised"])) for r in requests]
    for before, after in itertools.pairwise(requests):
        previous = canonical_bytes(before["normalised"])
        assert canonical_bytes(after["normalised"]).startswith(previous)
        assert after["prefix_bytes"] == len(previous)
    assert stats["prefix_shared_bytes"] == sizes[0] + sizes[1]


async def test_a_follow_up_in_another_folder_sends_only_what_changed(
    workspace: Path, home: Path
) -> None:
    async with serve_model_server(lambda r: "ok") as server:
        env = corral_env(home, server.base_url)
        first = await run_corral(
            ["exec", "--run-id", "run-follow", "first"], env=env, cwd=workspace
        )
        assert first.code == 0, first.stderr
        sub = workspace / "pkg" / "sub"
        second = await run_corral(
            ["resume", "run-follow", "second", "--cd", str(sub)], env=env, cwd=workspace
        )
        assert second.code == 0, second.stderr
        before, after = server.requests
    new = texts(after)[len(texts(before)) + 1 :]  # past the old history and the first answer
    assert [role for role, _ in new] == ["user", "user", "user"]
    assert new[0][1].startswith(f"# AGENTS.md instructions for {sub}"), "AGENTS.md is re-read"
    env_diff = new[1][1]
    assert env_diff.startswith("<environment_context>") and f"<cwd>{sub}</cwd>" in env_diff
    assert new[2][1] == "second"
    assert not any(text.startswith("<permissions") for _, text in new), "unchanged: not resent"
    assert canonical_bytes(after["normalised"]).startswith(canonical_bytes(before["normalised"]))


async def test_json_mode_prints_every_journaled_event_as_one_line(
    workspace: Path, home: Path
) -> None:
    async with serve_model_server(two_steps) as server:
        result = await run_corral(
            ["exec", "--json", "go"], env=corral_env(home, server.base_url), cwd=workspace
        )
    assert result.code == 0, result.stderr
    events = result.json_lines()
    kinds = [e["kind"] for e in events]
    assert kinds[:2] == ["agent_started", "user_input"]
    assert kinds[-2:] == ["model_completed", "agent_finished"]
    assert kinds.count("tool_result") == 2
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


async def test_invalid_config_names_the_file_and_the_key(workspace: Path, home: Path) -> None:
    (workspace / ".corral").mkdir()
    (workspace / ".corral" / "config.toml").write_text('personality = "rude"\n')
    result = await run_corral(
        ["exec", "go"], env=corral_env(home, "http://127.0.0.1:9/v1"), cwd=workspace
    )
    assert result.code == 2
    assert "config.toml" in result.stderr and "personality" in result.stderr
    assert "Traceback" not in result.stderr


async def test_a_binary_agents_md_is_refused_with_a_clear_message(
    workspace: Path, home: Path
) -> None:
    (workspace / "AGENTS.md").write_bytes(b"\x00\x01binary")
    async with serve_model_server(lambda r: "ok") as server:
        result = await run_corral(
            ["exec", "go"], env=corral_env(home, server.base_url), cwd=workspace
        )
        assert server.requests == [], "nothing is sent when the context cannot be built"
    assert result.code == 2
    assert str(workspace / "AGENTS.md") in result.stderr and "Traceback" not in result.stderr


async def test_an_endpoint_that_refuses_connections_fails_with_one_line(
    workspace: Path, home: Path
) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = corral_env(home, f"http://127.0.0.1:{port}/v1")
    result = await run_corral(["exec", "-c", "request_max_retries=1", "go"], env=env, cwd=workspace)
    assert result.code == 1
    assert "refused" in result.stderr and f"127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


async def test_a_missing_working_directory_is_a_usage_error(home: Path, tmp_path: Path) -> None:
    result = await run_corral(
        ["exec", "--cd", str(tmp_path / "nope"), "go"], env=corral_env(home), cwd=tmp_path
    )
    assert result.code == 2 and "not a directory" in result.stderr


async def test_exec_over_chat_completions_keeps_the_layout_and_the_prefix(
    workspace: Path, home: Path
) -> None:
    async with serve_model_server(two_steps) as server:
        env = corral_env(home, server.base_url)
        result = await run_corral(
            ["exec", "--api", "chat", "run two commands"], env=env, cwd=workspace
        )
        assert result.code == 0, result.stderr
        assert result.stdout.strip() == "finished after two commands"
        requests = list(server.requests)
    assert {r["endpoint"] for r in requests} == {"/v1/chat/completions"}
    roles = texts(requests[0])
    assert roles[0][0] == "developer" and roles[0][1].startswith("<permissions instructions>")
    assert roles[-1] == ("user", "run two commands")
    for before, after in itertools.pairwise(requests):
        assert after["prefix_bytes"] == len(canonical_bytes(before["normalised"]))
